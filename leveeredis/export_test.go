package leveeredis

import "context"

// SetLocalGrantHook makes f learn of every grant of a local share to AcquirePermission, with
// the request's ctx, for the fault run's log of which admissions were decided locally.
func SetLocalGrantHook(f func(ctx context.Context)) { localGrantHook = f }
