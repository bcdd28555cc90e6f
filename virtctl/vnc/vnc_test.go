package vnc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/virtctl/stream/streamtest"
	"kubevirt.dev/virt/virtctl/vnc"
)

const vmiPath = "/apis/virtualization.kubevirt.io/v1/namespaces/default/virtualmachineinstances/vmi-tiny/"

// greeting is what the fake display says first, as an RFB server does.
const greeting = "RFB 003.008\n"

// picture stands for a PNG: the client passes the bytes on as they are.
var picture = []byte("\x89PNG\r\n\x1a\n...")

// guest serves a VMI's display: the vnc stream greets and echoes; the
// screenshot answers picture, or a 409 for the VMI "paused-off".
func guest(t *testing.T, screenshots *[]*http.Request) *rest.Config {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+vmiPath+"vnc", func(w http.ResponseWriter, r *http.Request) {
		conn, err := streamtest.Upgrade(w, r)
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = io.WriteString(conn, greeting)
		_, _ = io.Copy(conn, conn)
	})
	mux.HandleFunc("GET "+vmiPath+"vnc/screenshot", func(w http.ResponseWriter, r *http.Request) {
		*screenshots = append(*screenshots, r)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(picture)
	})
	mux.HandleFunc("GET /apis/virtualization.kubevirt.io/v1/namespaces/default/virtualmachineinstances/off/vnc/screenshot", func(w http.ResponseWriter, r *http.Request) {
		st := apierrors.NewConflict(schema.GroupResource{Resource: "virtualmachineinstances"}, "off", errors.New("VMI off is not running (phase Succeeded)")).ErrStatus
		st.APIVersion, st.Kind = "v1", "Status"
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		_ = json.NewEncoder(w).Encode(st)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return streamtest.Config(srv)
}

func TestScreenshot(t *testing.T) {
	var reqs []*http.Request
	client, err := virtclient.NewForConfig(guest(t, &reqs))
	if err != nil {
		t.Fatal(err)
	}
	got, err := vnc.Screenshot(t.Context(), client, "default", "vmi-tiny", true)
	if err != nil {
		t.Fatalf("Screenshot: %v", err)
	}
	if !bytes.Equal(got, picture) {
		t.Errorf("Screenshot = %q, want the server's bytes", got)
	}
	if len(reqs) != 1 || reqs[0].URL.Query().Get("moveCursor") != "true" || reqs[0].Header.Get("Accept") != "image/png, application/json" {
		t.Errorf("requests %v, want one with moveCursor=true accepting image/png", reqs)
	}
	_, err = vnc.Screenshot(t.Context(), client, "default", "off", false)
	if !apierrors.IsConflict(err) || err.Error() != "Operation cannot be fulfilled on virtualmachineinstances \"off\": VMI off is not running (phase Succeeded)" {
		t.Errorf("Screenshot of a VMI not running: %v, want the server's Conflict", err)
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

// view is a viewer on conn: it reads the greeting and has a message
// echoed.
func view(conn net.Conn) error {
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	b := make([]byte, len(greeting))
	if _, err := io.ReadFull(conn, b); err != nil || string(b) != greeting {
		return errors.Join(errors.New("no greeting: "+string(b)), err)
	}
	if _, err := io.WriteString(conn, "hello"); err != nil {
		return err
	}
	b = make([]byte, 5)
	if _, err := io.ReadFull(conn, b); err != nil || string(b) != "hello" {
		return errors.Join(errors.New("no echo: "+string(b)), err)
	}
	return nil
}

func TestProxyServesEachViewer(t *testing.T) {
	cfg := guest(t, new([]*http.Request))
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
			if err := view(c); err != nil {
				t.Errorf("a viewer: %v", err)
			}
		})
	}
	wg.Wait()

	// A viewer still connected when the proxy stops is let go.
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := view(c); err != nil {
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
