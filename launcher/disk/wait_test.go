package disk

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"kubevirt.dev/virt/launcher/layout"
)

// The wait ends once every record is there, an error record included, and
// not before.
func TestWaitForContainerDisks(t *testing.T) {
	dir := t.TempDir()
	volumes := []string{"root", "data"}
	done := make(chan error, 1)
	go func() { done <- WaitForContainerDisks(t.Context(), dir, volumes, time.Millisecond) }()

	writeRecord(t, dir, "root", layout.ContainerDisk{PID: 1, Path: "/disk/a.qcow2"})
	if missing, err := MissingRecords(dir, volumes); err != nil || !slices.Equal(missing, []string{"data"}) {
		t.Fatalf("MissingRecords = %v, %v; want [data]", missing, err)
	}
	select {
	case err := <-done:
		t.Fatalf("the wait ended (%v) with a record missing", err)
	default:
	}
	writeRecord(t, dir, "data", layout.ContainerDisk{Error: "no disk"})
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("WaitForContainerDisks: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the wait did not end once every record was there")
	}
}

func TestWaitForContainerDisksEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := WaitForContainerDisks(ctx, t.TempDir(), []string{"root"}, time.Millisecond); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitForContainerDisks after cancel: %v", err)
	}
	if err := WaitForContainerDisks(t.Context(), t.TempDir(), nil, time.Millisecond); err != nil {
		t.Errorf("without container disks: %v, want nil at once", err)
	}
}
