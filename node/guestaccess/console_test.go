package guestaccess

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/sys/unix"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/socket"
)

// expect reads the next message of ws and checks it is binary and want.
func expect(t *testing.T, ws *websocket.Conn, want string) {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	typ, data, err := ws.ReadMessage()
	if err != nil {
		t.Fatalf("reading %q: %v", want, err)
	}
	if typ != websocket.BinaryMessage || string(data) != want {
		t.Fatalf("got message type %d %q, want binary %q", typ, data, want)
	}
}

func send(t *testing.T, ws *websocket.Conn, msg string) {
	t.Helper()
	if err := ws.WriteMessage(websocket.BinaryMessage, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

// expectClose reads until ws is closed and returns the close frame.
func expectClose(t *testing.T, ws *websocket.Conn) *websocket.CloseError {
	t.Helper()
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, _, err := ws.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("stream ended with %v, want a close frame", err)
		}
		return ce
	}
}

// closeClean closes ws as a client should and checks the handler answers
// the close frame.
func closeClean(t *testing.T, ws *websocket.Conn) {
	t.Helper()
	if err := ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if ce := expectClose(t, ws); ce.Code != websocket.CloseNormalClosure {
		t.Errorf("close answered with %v, want normal closure", ce)
	}
}

func TestConsoleEcho(t *testing.T) {
	f := newFixture(t)
	g := f.addVMI("vm", virtv1.Running)
	qemu := listenSocket(t, layout.SerialSocket(g.privateDir), "serial", true)

	ws, st := f.dialStream(f.url("wss", "ns", "vm", "console", string(g.vmi.UID)))
	if st != nil {
		t.Fatalf("console refused: %+v", st)
	}
	expect(t, ws, "serial 1\n")
	send(t, ws, "root\r\n")
	expect(t, ws, "root\r\n")
	// Text from a client is bytes for the guest all the same.
	if err := ws.WriteMessage(websocket.TextMessage, []byte("ls")); err != nil {
		t.Fatal(err)
	}
	expect(t, ws, "ls")

	closeClean(t, ws)
	eventually(t, "the handler closing QEMU's socket", func() bool {
		_, closed := qemu.counts()
		return closed == 1
	})
}

func TestConsoleTakeOver(t *testing.T) {
	f := newFixture(t)
	g := f.addVMI("vm", virtv1.Running)
	qemu := listenSocket(t, layout.SerialSocket(g.privateDir), "serial", true)
	url := f.url("wss", "ns", "vm", "console", string(g.vmi.UID))

	first, _ := f.dialStream(url)
	expect(t, first, "serial 1\n")

	// QEMU accepts the second client only once the first is gone: the
	// greeting proves the handler let go of the first socket.
	second, st := f.dialStream(url)
	if st != nil {
		t.Fatalf("second console refused: %+v", st)
	}
	ce := expectClose(t, first)
	if ce.Code != websocket.CloseNormalClosure || ce.Text != TakenOver {
		t.Errorf("first console closed with %v, want normal closure %q", ce, TakenOver)
	}
	expect(t, second, "serial 2\n")
	send(t, second, "x")
	expect(t, second, "x")
	if accepted, closed := qemu.counts(); accepted != 2 || closed != 1 {
		t.Errorf("QEMU saw %d connections, %d closed; want 2 and the first closed", accepted, closed)
	}

	// Another VMI's console is not affected.
	h := f.addVMI("other", virtv1.Running)
	listenSocket(t, layout.SerialSocket(h.privateDir), "other", true)
	third, _ := f.dialStream(f.url("wss", "ns", "other", "console", string(h.vmi.UID)))
	expect(t, third, "other 1\n")
	send(t, second, "still here")
	expect(t, second, "still here")
}

func TestConsoleGuestGone(t *testing.T) {
	f := newFixture(t)
	g := f.addVMI("vm", virtv1.Running)
	path := layout.SerialSocket(g.privateDir)
	ln := listenOnce(t, path)
	ws, _ := f.dialStream(f.url("wss", "ns", "vm", "console", string(g.vmi.UID)))
	conn := <-ln
	// QEMU stops: its side of the socket closes.
	_ = conn.Close()
	if ce := expectClose(t, ws); ce.Code != websocket.CloseNormalClosure || ce.Text != GuestClosed {
		t.Errorf("console closed with %v, want normal closure %q", ce, GuestClosed)
	}
}

// listenOnce accepts one connection at path and hands it over.
func listenOnce(t *testing.T, path string) <-chan net.Conn {
	t.Helper()
	ln, err := socket.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	conns := make(chan net.Conn, 1)
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			conns <- conn
		}
	}()
	return conns
}

func TestVNCViewersShare(t *testing.T) {
	f := newFixture(t)
	g := f.addVMI("vm", virtv1.Running)
	listenSocket(t, layout.VNCSocket(g.privateDir), "vnc", false)
	url := f.url("wss", "ns", "vm", "vnc", string(g.vmi.UID))

	a, st := f.dialStream(url)
	if st != nil {
		t.Fatalf("vnc refused: %+v", st)
	}
	expect(t, a, "vnc 1\n")
	b, _ := f.dialStream(url)
	expect(t, b, "vnc 2\n")
	send(t, a, "RFB a")
	expect(t, a, "RFB a")
	send(t, b, "RFB b")
	expect(t, b, "RFB b")
	closeClean(t, a)
	closeClean(t, b)
}

func TestStreamsFindTheVMI(t *testing.T) {
	f := newFixture(t)
	running := f.addVMI("vm", virtv1.Running)
	qemu := listenSocket(t, layout.SerialSocket(running.privateDir), "serial", true)
	f.addVMI("starting", virtv1.Scheduled)
	f.addVMI("novnc", virtv1.Running)
	headless := f.addVMI("headless", virtv1.Running)
	headless.vmi.Spec.Domain.Devices.AutoattachGraphicsDevice = ptr.To(false)
	listenSocket(t, layout.VNCSocket(headless.privateDir), "vnc", false)

	tests := []struct {
		name, vmi, sub, uid string
		want                int32
		wantMsg             string
	}{
		{name: "unknown VMI", vmi: "missing", sub: "console", uid: "missing-uid", want: http.StatusNotFound},
		{name: "uid mismatch", vmi: "vm", sub: "console", uid: "old-uid", want: http.StatusNotFound},
		{name: "not running", vmi: "starting", sub: "vnc", uid: "starting-uid", want: http.StatusConflict, wantMsg: "VMI starting is not running (phase Scheduled)"},
		{name: "no VNC server", vmi: "novnc", sub: "vnc", uid: "novnc-uid", want: http.StatusServiceUnavailable, wantMsg: "not reachable"},
		{name: "no graphics device", vmi: "headless", sub: "vnc", uid: "headless-uid", want: http.StatusBadRequest, wantMsg: "autoattachGraphicsDevice is false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, st := f.dialStream(f.url("wss", "ns", tt.vmi, tt.sub, tt.uid))
			if ws != nil {
				t.Fatal("stream opened, want it refused")
			}
			if st.Code != tt.want || !strings.Contains(st.Message, tt.wantMsg) {
				t.Errorf("answer = %+v, want %d %q", st, tt.want, tt.wantMsg)
			}
		})
	}

	// A GET that is no upgrade must not take the console over.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: f.clientTLS(f.client)}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Get(f.url("https", "ns", "vm", "console", string(running.vmi.UID)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if st := decodeStatus(t, resp); st.Code != http.StatusBadRequest {
		t.Errorf("plain GET answered %+v, want 400", st)
	}
	if accepted, _ := qemu.counts(); accepted != 0 {
		t.Errorf("QEMU saw %d connections from refused requests, want none", accepted)
	}
}

// Serve ends with its context, and open streams end with "going away".
func TestServeClosesStreamsOnShutdown(t *testing.T) {
	f := newFixture(t)
	g := f.addVMI("vm", virtv1.Running)
	listenSocket(t, layout.SerialSocket(g.privateDir), "serial", true)
	tlsConfig := f.srv.TLS
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- f.server.Serve(ctx, ln, tlsConfig) }()

	d := websocket.Dialer{TLSClientConfig: f.clientTLS(f.client), Subprotocols: []string{Subprotocol}}
	ws, _, err := d.DialContext(t.Context(), "wss://"+ln.Addr().String()+"/v1/namespaces/ns/virtualmachineinstances/vm/console?uid=vm-uid", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	expect(t, ws, "serial 1\n")

	// A refused client is refused by Serve's TLS configuration too.
	other := f.ca.Issue(t, "virt-controller", x509.ExtKeyUsageClientAuth)
	d2 := websocket.Dialer{TLSClientConfig: f.clientTLS(other)}
	if _, _, err := d2.DialContext(t.Context(), "wss://"+ln.Addr().String()+"/v1/namespaces/ns/virtualmachineinstances/vm/vnc?uid=vm-uid", nil); err == nil {
		t.Error("virt-controller's certificate opened a stream")
	}

	cancel()
	if ce := expectClose(t, ws); ce.Code != websocket.CloseGoingAway || ce.Text != ShuttingDown {
		t.Errorf("stream closed with %v, want going away %q", ce, ShuttingDown)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve = %v, want nil after its context ended", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

// TestStreamsRefuseWhatIsNotQEMUs: a tenant who replaces the console or VNC
// socket in the pod's directory must not have the handler stream another
// socket of the node (here a "host" socket outside the kubelet root), nor
// hang on a FIFO: the stream is refused with 503 and the outside socket is
// never connected to.
func TestStreamsRefuseWhatIsNotQEMUs(t *testing.T) {
	f := newFixture(t)
	hostSocket := filepath.Join(t.TempDir(), "containerd.sock")
	host := listenSocket(t, hostSocket, "host", false)
	tests := []struct {
		name, sub, file string
		plant           func(t *testing.T, path string)
	}{
		{name: "console as a symlink to a host socket", sub: "console", file: layout.SerialSocketName, plant: func(t *testing.T, path string) {
			if err := os.Symlink(hostSocket, path); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "VNC as a symlink to a host socket", sub: "vnc", file: layout.VNCSocketName, plant: func(t *testing.T, path string) {
			if err := os.Symlink(hostSocket, path); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "console as a FIFO", sub: "console", file: layout.SerialSocketName, plant: func(t *testing.T, path string) {
			if err := unix.Mkfifo(path, 0o666); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "VNC as a regular file", sub: "vnc", file: layout.VNCSocketName, plant: func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("RFB 003.008\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("vm%d", i)
			g := f.addVMI(name, virtv1.Running)
			tt.plant(t, filepath.Join(g.privateDir, tt.file))
			ws, st := f.dialStream(f.url("wss", "ns", name, tt.sub, string(g.vmi.UID)))
			if ws != nil || st == nil || st.Code != http.StatusServiceUnavailable {
				t.Fatalf("stream = %v, %+v; want 503", ws, st)
			}
			t.Logf("refused: %s", st.Message)
		})
	}
	if accepted, _ := host.counts(); accepted != 0 {
		t.Errorf("the host socket was connected to %d times", accepted)
	}
}
