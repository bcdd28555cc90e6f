package v1

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// SyncErrorIsPermanent reports whether a Sync error means the VMI can never
// run in this launcher: its spec cannot be turned into a domain that runs
// here (InvalidArgument), what it needs is missing or the launcher is past
// running a guest (FailedPrecondition), or the launcher has no Sync
// (Unimplemented). Every other code, Internal included, is worth another
// Sync later. Permanent or not, a caller must not fail a VMI whose domain
// has started because a Sync failed.
func SyncErrorIsPermanent(err error) bool {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.FailedPrecondition, codes.Unimplemented:
		return true
	}
	return false
}
