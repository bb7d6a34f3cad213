package leveestatus

import (
	_ "embed"
	"net/http"
)

//go:embed dashboard.html
var dashboardHTML []byte

// serveDashboard answers GET /: the dashboard, one page with its styles and script inline,
// which follows GET /stream (a relative address, so the page works under any prefix that
// ends with a slash).
func (h *Handler) serveDashboard(w http.ResponseWriter, _ *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:")
	hdr.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(dashboardHTML)
}
