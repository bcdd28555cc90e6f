package migrationproxy

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"path/filepath"
	"testing"
)

// unixPair is both ends of a unix stream connection.
func unixPair(t *testing.T, name string) (*net.UnixConn, *net.UnixConn) {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(t.TempDir(), name), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dialed, err := net.DialUnix("unix", nil, ln.Addr().(*net.UnixAddr))
	if err != nil {
		t.Fatal(err)
	}
	accepted, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dialed.Close(); accepted.Close() })
	return dialed, accepted
}

// TestCopyStreamBetweenUnixSockets: the spliced copy (both ends plain
// sockets) moves every byte in order, more than the pipe holds at once,
// and returns at the source's end of stream with the count.
func TestCopyStreamBetweenUnixSockets(t *testing.T) {
	writer, in := unixPair(t, "in")
	out, reader := unixPair(t, "out")
	payload := make([]byte, 16<<20+12345)
	if _, err := rand.Read(payload); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, _ = writer.Write(payload)
		_ = writer.CloseWrite()
	}()
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(reader)
		got <- b
	}()
	n, err := copyStream(out, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if n != int64(len(payload)) {
		t.Errorf("copied %d bytes, want %d", n, len(payload))
	}
	if b := <-got; !bytes.Equal(b, payload) {
		t.Errorf("received %d bytes that differ from the %d sent", len(b), len(payload))
	}
}

// TestCopyStreamEndsOnAClosedDestination: a destination whose reader
// went away ends the copy with an error instead of blocking.
func TestCopyStreamEndsOnAClosedDestination(t *testing.T) {
	writer, in := unixPair(t, "in")
	out, reader := unixPair(t, "out")
	reader.Close()
	go func() { _, _ = writer.Write(make([]byte, 4<<20)) }()
	if _, err := copyStream(out, in); err == nil {
		t.Error("copy to a closed peer succeeded")
	}
}
