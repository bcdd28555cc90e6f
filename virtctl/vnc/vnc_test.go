package vnc_test

import (
	"context"
	"errors"
	"image"
	"image/color"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"kubevirt.dev/virt/virtctl/rfb"
	"kubevirt.dev/virt/virtctl/rfb/rfbtest"
	"kubevirt.dev/virt/virtctl/stream/streamtest"
	"kubevirt.dev/virt/virtctl/vnc"
)

const vncPath = "/apis/virtualization.kubevirt.io/v1/namespaces/default/virtualmachineinstances/vmi-tiny/vnc"

func display() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 8, 5))
	for y := range 5 {
		for x := range 8 {
			img.SetRGBA(x, y, color.RGBA{R: uint8(30 * x), G: uint8(50 * y), B: 200, A: 255})
		}
	}
	return img
}

// guest serves a VMI's display on the vnc subresource; hang makes it
// accept the stream and say nothing.
func guest(t *testing.T, hang bool) *rest.Config {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != vncPath {
			t.Errorf("path %s, want %s", r.URL.Path, vncPath)
			http.NotFound(w, r)
			return
		}
		conn, err := streamtest.Upgrade(w, r)
		if err != nil {
			return
		}
		defer conn.Close()
		if hang {
			_, _ = io.Copy(io.Discard, conn)
			return
		}
		_ = rfbtest.Serve(conn, display())
	}))
	t.Cleanup(srv.Close)
	return streamtest.Config(srv)
}

func sameImage(t *testing.T, got *image.RGBA) {
	t.Helper()
	want := display()
	if got.Bounds() != want.Bounds() {
		t.Fatalf("image %v, want %v", got.Bounds(), want.Bounds())
	}
	for y := range 5 {
		for x := range 8 {
			if got.RGBAAt(x, y) != want.RGBAAt(x, y) {
				t.Fatalf("pixel %d,%d: %v, want %v", x, y, got.RGBAAt(x, y), want.RGBAAt(x, y))
			}
		}
	}
}

func TestScreenshot(t *testing.T) {
	img, err := vnc.Screenshot(t.Context(), guest(t, false), "default", "vmi-tiny")
	if err != nil {
		t.Fatalf("Screenshot: %v", err)
	}
	sameImage(t, img)
}

func TestScreenshotEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := vnc.Screenshot(ctx, guest(t, true), "default", "vmi-tiny")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Screenshot: %v, want the deadline", err)
	}
}

type events struct {
	mu   sync.Mutex
	list []string
	errs []error
}

func (e *events) add(_ net.Addr, what string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, what)
	if err != nil {
		e.errs = append(e.errs, err)
	}
}

func TestProxyServesEachViewer(t *testing.T) {
	cfg := guest(t, false)
	var ev events
	p := &vnc.Proxy{
		Dial: func(ctx context.Context) (io.ReadWriteCloser, error) {
			return vnc.Dial(ctx, cfg, "default", "vmi-tiny")
		},
		Event: ev.add,
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, l) }()

	// Two viewers at once, each with its own stream.
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			c, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			img, err := rfb.Screenshot(c)
			if err != nil {
				t.Errorf("a viewer's screenshot: %v", err)
				return
			}
			sameImage(t, img)
		})
	}
	wg.Wait()

	// A viewer still connected when the proxy stops is let go.
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := rfb.Connect(c); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return when its context ended")
	}
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("the viewer's connection is open after Serve returned")
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if len(ev.errs) != 0 {
		t.Errorf("errors: %v", ev.errs)
	}
	if len(ev.list) != 6 {
		t.Errorf("events %v, want 3 viewers connected and disconnected", ev.list)
	}
}

func TestProxyClosesTheViewerWhenTheDisplayIsOutOfReach(t *testing.T) {
	var ev events
	unreachable := errors.New("virtualmachineinstance vmi-tiny not found")
	p := &vnc.Proxy{
		Dial:  func(context.Context) (io.ReadWriteCloser, error) { return nil, unreachable },
		Event: ev.add,
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go p.Serve(ctx, l)
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("viewer read: %v, want EOF", err)
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if len(ev.errs) != 1 || !errors.Is(ev.errs[0], unreachable) {
		t.Errorf("errors %v, want the dial's", ev.errs)
	}
}
