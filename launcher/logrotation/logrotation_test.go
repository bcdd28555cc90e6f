package logrotation

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	f := File{Path: filepath.Join(dir, "serial0.log"), Max: 1024}

	if rotated, err := f.Check(); rotated || err != nil {
		t.Fatalf("a missing file: rotated %v, err %v", rotated, err)
	}
	// The writer appends, as QEMU does, and keeps its descriptor.
	w, err := os.OpenFile(f.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Write(bytes.Repeat([]byte("a"), 1024))
	if rotated, err := f.Check(); rotated || err != nil {
		t.Fatalf("at the bound: rotated %v, err %v", rotated, err)
	}
	w.Write(bytes.Repeat([]byte("b"), 1000))
	w.Write([]byte("END"))
	if rotated, err := f.Check(); !rotated || err != nil {
		t.Fatalf("past the bound: rotated %v, err %v", rotated, err)
	}
	older, err := os.ReadFile(f.Path + ".1")
	if err != nil {
		t.Fatal(err)
	}
	if len(older) != 1024 || !bytes.HasSuffix(older, []byte("bbbEND")) {
		t.Errorf("older generation has %d bytes ending %q, want the last 1024", len(older), older[max(0, len(older)-6):])
	}
	// The writer's next append lands at the start of the emptied file.
	w.Write([]byte("next"))
	if cur, _ := os.ReadFile(f.Path); string(cur) != "next" {
		t.Errorf("after the rotation the file holds %q, want what came after", cur)
	}
}

func TestCheckRefusesSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, bytes.Repeat([]byte("x"), 4096), 0o644)
	f := File{Path: filepath.Join(dir, "serial0.log"), Max: 1024}
	if err := os.Symlink(target, f.Path); err != nil {
		t.Fatal(err)
	}
	if rotated, err := f.Check(); rotated || err == nil {
		t.Errorf("a symlink: rotated %v, err %v; want an error", rotated, err)
	}
	if b, _ := os.ReadFile(target); len(b) != 4096 {
		t.Errorf("the symlink's target was changed to %d bytes", len(b))
	}
}

// TestKeepBoundsAWriterThatNeverStops: a writer appending without pause
// never has more than twice the bound on disk, plus what it writes between
// two checks.
func TestKeepBoundsAWriterThatNeverStops(t *testing.T) {
	dir := t.TempDir()
	f := File{Path: filepath.Join(dir, "serial0.log"), Max: 64 << 10}
	w, err := os.OpenFile(f.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); Keep(ctx, 10*time.Millisecond, f) }()
	defer func() { cancel(); <-done }()

	line := bytes.Repeat([]byte("x"), 1023)
	line = append(line, '\n')
	for written := 0; written < 4<<20; written += len(line) {
		w.Write(line)
	}
	err = wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return onDisk(t, f) <= 2*f.Max, nil
	})
	if err != nil {
		t.Errorf("4 MiB written: %d bytes on disk, want at most %d", onDisk(t, f), 2*f.Max)
	}
}

func onDisk(t *testing.T, f File) int64 {
	var n int64
	for _, p := range []string{f.Path, f.Path + ".1"} {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}
