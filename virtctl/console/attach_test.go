package console_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"kubevirt.dev/virt/virtctl/console"
	"kubevirt.dev/virt/virtctl/stream"
	"kubevirt.dev/virt/virtctl/stream/streamtest"
)

// guest is a fake console: it greets, then echoes upper-cased input and
// records what it received.
type guest struct {
	mu       sync.Mutex
	received bytes.Buffer
	closed   chan struct{}
}

func newGuest() *guest { return &guest{closed: make(chan struct{})} }

func (g *guest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	conn, err := streamtest.Upgrade(w, r)
	if err != nil {
		return
	}
	defer close(g.closed)
	defer conn.Close()
	_, _ = conn.Write([]byte("login: "))
	buf := make([]byte, 64)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return
		}
		g.mu.Lock()
		g.received.Write(buf[:n])
		g.mu.Unlock()
		_, _ = conn.Write(bytes.ToUpper(buf[:n]))
	}
}

func (g *guest) got() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.received.String()
}

// syncBuffer is a bytes.Buffer safe for Attach's writer goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func dial(t *testing.T, h http.Handler) io.ReadWriteCloser {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	conn, err := console.Dial(t.Context(), streamtest.Config(srv), "default", "vmi-tiny")
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	return conn
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestAttachEndsAtTheEscape(t *testing.T) {
	g := newGuest()
	conn := dial(t, g)
	inR, inW := io.Pipe()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- console.Attach(t.Context(), conn, inR, &out) }()

	waitFor(t, "the greeting", func() bool { return out.String() == "login: " })
	_, _ = inW.Write([]byte("root\r"))
	waitFor(t, "the echo", func() bool { return out.String() == "login: ROOT\r" })
	_, _ = inW.Write([]byte("x\x1dy"))

	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Attach: %v, want nil after the escape", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Attach did not return after the escape")
	}
	select {
	case <-g.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the console connection stayed open after the escape")
	}
	if got := g.got(); got != "root\rx" {
		t.Errorf("the guest received %q, want %q (nothing from the escape on)", got, "root\rx")
	}
}

func TestAttachEndsWithTheInput(t *testing.T) {
	g := newGuest()
	err := console.Attach(t.Context(), dial(t, g), strings.NewReader(""), io.Discard)
	if err != nil {
		t.Errorf("Attach: %v, want nil at the end of the input", err)
	}
}

func TestAttachSaysWhyTheServerClosed(t *testing.T) {
	conn := dial(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = streamtest.CloseWith(w, r, "another console connection took over")
	}))
	inR, _ := io.Pipe() // a terminal nobody types on
	err := console.Attach(t.Context(), conn, inR, io.Discard)
	var closed *stream.ClosedError
	if !errors.As(err, &closed) || closed.Reason != "another console connection took over" {
		t.Errorf("Attach: %v, want the server's reason", err)
	}
}

func TestAttachEndsWithTheContext(t *testing.T) {
	g := newGuest()
	conn := dial(t, g)
	ctx, cancel := context.WithCancel(t.Context())
	inR, _ := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- console.Attach(ctx, conn, inR, io.Discard) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Attach: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Attach did not return when its context ended")
	}
}
