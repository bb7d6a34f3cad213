// Package browsertest holds the browser test of leveestatus's dashboard: the page is opened in
// headless Chromium, driven by chromedp, and must show a breaker turning red within a second
// of its opening. It is a module of its own so that the core module does not depend on
// chromedp; it has no code besides its tests.
package browsertest
