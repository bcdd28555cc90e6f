package guestaccess

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	virtlisters "kubevirt.dev/virt/generated/listers/virtualization/v1"
	"kubevirt.dev/virt/node/monitor"
	"kubevirt.dev/virt/node/podfs"
)

// Subprotocol is the WebSocket subprotocol of the streams: binary messages
// carry raw bytes both ways.
const Subprotocol = "plain.kubevirt.io"

// Launchers hands out the connection the VMI controller keeps to a launcher
// (*monitor.Monitor). Guest access never opens one itself: a running VMI's
// launcher is watched by the controller.
type Launchers interface {
	Get(podUID types.UID) (*monitor.Launcher, bool)
}

// Config is what the server reads.
type Config struct {
	// NodeName is this node: a VMI of another node is unknown here.
	NodeName string
	// PodFiles is where the launchers' console and VNC sockets are (below
	// the kubelet's root directory) and which uid serves them.
	PodFiles podfs.Pods
	// ClientName is the only client certificate common name served
	// (DefaultClientName).
	ClientName string
	// VMIs lists the node's VMIs (the handler's informer).
	VMIs virtlisters.VirtualMachineInstanceLister
	// Pods holds the node's launcher pods, indexed by
	// internal/vmipod.VMIUIDIndex.
	Pods cache.Indexer
	// HasSynced reports whether VMIs and Pods are filled; before, every
	// request is answered 503.
	HasSynced func() bool
	// Launchers are the launcher connections of the VMI controller.
	Launchers Launchers
}

// Server serves guest access. Create it with New.
type Server struct {
	cfg      Config
	consoles consoles
	upgrader websocket.Upgrader
}

// New returns a server for cfg.
func New(cfg Config) *Server {
	return &Server{
		cfg:      cfg,
		consoles: consoles{byVMI: map[types.UID]*session{}},
		upgrader: websocket.Upgrader{
			Subprotocols:     []string{Subprotocol},
			HandshakeTimeout: 10 * time.Second,
			// The only client is virt-apiserver, authenticated by its
			// certificate and proxying for users it authorized; an Origin
			// header is a browser's, checked (if at all) before us.
			CheckOrigin: func(*http.Request) bool { return true },
		},
	}
}

// Handler routes the paths of docs/guest-access.md, for the configured
// client only.
func (s *Server) Handler() http.Handler {
	const vmi = "/v1/namespaces/{namespace}/virtualmachineinstances/{name}/"
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+vmi+"console", s.console)
	mux.HandleFunc("GET "+vmi+"vnc", s.vnc)
	mux.HandleFunc("GET "+vmi+"vnc/screenshot", s.screenshot)
	for _, a := range actions {
		mux.HandleFunc("PUT "+vmi+a.name, func(w http.ResponseWriter, r *http.Request) { s.act(w, r, a) })
	}
	return s.authorize(mux)
}

// authorize repeats the TLS configuration's client check per request, so the
// handler never serves another client whatever TLS configuration it is
// served with.
func (s *Server) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkClient(r.TLS, s.cfg.ClientName); err != nil {
			klog.FromContext(r.Context()).Info("Refused a guest access request", "remote", r.RemoteAddr, "path", r.URL.Path, "err", err)
			writeStatus(w, newStatus(http.StatusForbidden, metav1.StatusReasonForbidden, err.Error()))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Serve serves the handler over TLS on ln until ctx is done. Open streams
// are closed with "going away" then.
func (s *Server) Serve(ctx context.Context, ln net.Listener, tlsConfig *tls.Config) error {
	logger := klog.FromContext(ctx)
	srv := &http.Server{
		Handler:           s.Handler(),
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 10 * time.Second,
		// Requests and the streams they become end with ctx.
		BaseContext: func(net.Listener) context.Context { return ctx },
		// Refused handshakes (no certificate, another CA, another name)
		// land here, with the client's address.
		ErrorLog: log.New(logWriter{logger}, "", 0),
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err := srv.ServeTLS(ln, "", "")
	if errors.Is(err, http.ErrServerClosed) {
		<-stopped
		return nil
	}
	return fmt.Errorf("serve guest access: %w", err)
}

// logWriter turns net/http's error log lines into structured log lines.
type logWriter struct{ logger klog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.logger.Info("Guest access connection error", "err", strings.TrimSpace(string(p)))
	return len(p), nil
}

// writeStatus answers err as a metav1.Status, as the API does.
func writeStatus(w http.ResponseWriter, err error) {
	var st metav1.Status
	if se, ok := err.(apierrors.APIStatus); ok {
		st = se.Status()
	} else {
		st = apierrors.NewInternalError(err).Status()
	}
	writeJSON(w, st)
}

func writeJSON(w http.ResponseWriter, st metav1.Status) {
	st.Kind, st.APIVersion = "Status", "v1"
	data, err := json.Marshal(st)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(int(st.Code))
	_, _ = w.Write(data)
}
