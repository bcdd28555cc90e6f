package v1

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestSyncErrorIsPermanent(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{status.Error(codes.InvalidArgument, "convert"), true},
		{status.Error(codes.FailedPrecondition, "no disk"), true},
		{status.Error(codes.Unimplemented, "old"), true},
		{fmt.Errorf("sync domain: %w", status.Error(codes.InvalidArgument, "xml")), true},
		{status.Error(codes.Internal, "libvirt"), false},
		{status.Error(codes.Unavailable, "socket"), false},
		{status.Error(codes.Aborted, "x"), false},
		{status.Error(codes.DeadlineExceeded, "x"), false},
		{errors.New("not a status"), false},
		{nil, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.err), func(t *testing.T) {
			if got := SyncErrorIsPermanent(tt.err); got != tt.want {
				t.Errorf("SyncErrorIsPermanent(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
