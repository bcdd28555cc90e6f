package guestaccess

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/podfs"
)

// dialTimeout bounds connecting to QEMU's socket.
const dialTimeout = 5 * time.Second

// console streams the VMI's serial console; it takes the console over from
// an earlier connection.
func (s *Server) console(w http.ResponseWriter, r *http.Request) {
	if !websocket.IsWebSocketUpgrade(r) {
		// Checked first: a plain GET must not take a console over.
		writeStatus(w, apierrors.NewBadRequest("the console is a WebSocket stream: upgrade the connection"))
		return
	}
	t, err := s.find(r)
	if err != nil {
		writeStatus(w, err)
		return
	}
	logger := klog.LoggerWithValues(klog.FromContext(r.Context()), "vmi", t.String(), "stream", "console")
	sess := s.consoles.open(t.vmi.UID)
	defer s.consoles.close(t.vmi.UID, sess)
	if sess.stopped() {
		// An even newer connection came while this one waited for its
		// predecessor to let go: it never gets the socket.
		if ws, err := s.upgrader.Upgrade(w, r, nil); err == nil {
			closeAt(ws, websocket.CloseNormalClosure, TakenOver)
		}
		logger.V(2).Info("Console taken over before it was connected")
		return
	}
	conn, err := dial(r.Context(), t.privateDir, layout.SerialSocketName)
	if err != nil {
		writeStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("the serial console of VMI %s is not reachable: %v", t.vmi.Name, err)))
		return
	}
	s.stream(logger, w, r, sess.releasing(conn), sess.stop)
}

// vnc streams the VMI's VNC server; viewers share it.
func (s *Server) vnc(w http.ResponseWriter, r *http.Request) {
	if !websocket.IsWebSocketUpgrade(r) {
		writeStatus(w, apierrors.NewBadRequest("VNC is a WebSocket stream: upgrade the connection"))
		return
	}
	t, err := s.find(r)
	if err != nil {
		writeStatus(w, err)
		return
	}
	if err := hasScreen(t); err != nil {
		writeStatus(w, err)
		return
	}
	logger := klog.LoggerWithValues(klog.FromContext(r.Context()), "vmi", t.String(), "stream", "vnc")
	conn, err := dial(r.Context(), t.privateDir, layout.VNCSocketName)
	if err != nil {
		writeStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("the VNC server of VMI %s is not reachable (no graphics device?): %v", t.vmi.Name, err)))
		return
	}
	s.stream(logger, w, r, conn, nil)
}

// hasScreen is nil for a VMI with a graphics device, a 400 otherwise: as
// KubeVirt answers, the request, not the VMI's state, is wrong.
func hasScreen(t *target) error {
	if a := t.vmi.Spec.Domain.Devices.AutoattachGraphicsDevice; a != nil && !*a {
		return apierrors.NewBadRequest(fmt.Sprintf("VMI %s has no graphics device (spec.domain.devices.autoattachGraphicsDevice is false)", t.vmi.Name))
	}
	return nil
}

// stream upgrades the request and pipes it to conn until either ends.
func (s *Server) stream(logger klog.Logger, w http.ResponseWriter, r *http.Request, conn net.Conn, stop <-chan struct{}) {
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		// The upgrader answered the request with the error.
		_ = conn.Close()
		logger.Info("WebSocket upgrade failed", "err", err)
		return
	}
	logger.Info("Stream opened", "remote", r.RemoteAddr)
	why := pipe(r.Context(), ws, conn, stop)
	logger.Info("Stream closed", "why", why)
}

// dial connects to QEMU's socket name in the pod's private directory. QEMU
// runs as the launcher: podfs refuses any other file or peer, so a tenant
// cannot have the console stream another socket of the node.
func dial(ctx context.Context, privateDir podfs.Dir, name string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	conn, err := privateDir.Dial(ctx, name)
	if err != nil {
		return nil, err
	}
	return conn, nil
}

// closeAt sends a close frame and closes ws.
func closeAt(ws *websocket.Conn, code int, reason string) {
	_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(closeTimeout))
	_ = ws.Close()
}

// consoles are the console connections, one per VMI.
type consoles struct {
	mu    sync.Mutex
	byVMI map[types.UID]*session
}

// session is one console connection.
type session struct {
	// stop is closed when a newer connection takes over.
	stop     chan struct{}
	stopOnce sync.Once
	// released is closed once the session no longer holds QEMU's socket.
	released    chan struct{}
	releaseOnce sync.Once
}

// open makes a new session the VMI's console and returns it once the
// previous one, told to stop, has let go of QEMU's socket: the chardev
// serves one client at a time.
func (c *consoles) open(uid types.UID) *session {
	s := &session{stop: make(chan struct{}), released: make(chan struct{})}
	c.mu.Lock()
	old := c.byVMI[uid]
	c.byVMI[uid] = s
	c.mu.Unlock()
	if old != nil {
		old.takeOver()
		<-old.released
	}
	return s
}

// close ends s: the socket is released and s is no longer the VMI's
// console.
func (c *consoles) close(uid types.UID, s *session) {
	s.release()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byVMI[uid] == s {
		delete(c.byVMI, uid)
	}
}

func (s *session) takeOver() { s.stopOnce.Do(func() { close(s.stop) }) }

func (s *session) release() { s.releaseOnce.Do(func() { close(s.released) }) }

func (s *session) stopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// releasing wraps conn so that closing it releases the session.
func (s *session) releasing(conn net.Conn) net.Conn {
	return &releasingConn{Conn: conn, s: s}
}

type releasingConn struct {
	net.Conn
	s *session
}

func (c *releasingConn) Close() error {
	err := c.Conn.Close()
	c.s.release()
	return err
}
