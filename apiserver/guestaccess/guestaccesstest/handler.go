package guestaccesstest

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Subprotocol is the WebSocket subprotocol of the streams.
const Subprotocol = "plain.kubevirt.io"

// Request is a request the fake handler received.
type Request struct {
	Method string
	// Path is the URL path, /v1/namespaces/NS/virtualmachineinstances/NAME/SUB.
	Path string
	// UID is the uid query parameter.
	UID string
	// Subprotocols are those the client offered on an upgrade.
	Subprotocols []string
}

// Handler is a fake virt-handler's guest access: console and vnc are
// WebSocket streams that echo every message, pause, unpause and softreboot
// answer 200 Success, vnc/screenshot answers ScreenshotPNG, unless the
// test set another answer for the subresource.
type Handler struct {
	srv      *httptest.Server
	upgrader websocket.Upgrader

	mu       sync.Mutex
	requests []Request
	answers  map[string]metav1.Status
}

// NewHandler serves a fake handler with tlsConfig (PKI.HandlerTLS) until the
// test ends.
func NewHandler(t testing.TB, tlsConfig *tls.Config) *Handler {
	t.Helper()
	h := &Handler{
		answers: map[string]metav1.Status{},
		upgrader: websocket.Upgrader{
			Subprotocols:     []string{Subprotocol},
			HandshakeTimeout: 10 * time.Second,
			CheckOrigin:      func(*http.Request) bool { return true },
		},
	}
	const vmi = "/v1/namespaces/{namespace}/virtualmachineinstances/{name}/"
	mux := http.NewServeMux()
	for _, sub := range []string{"console", "vnc"} {
		mux.HandleFunc("GET "+vmi+sub, func(w http.ResponseWriter, r *http.Request) { h.stream(w, r, sub) })
	}
	for _, sub := range []string{"pause", "unpause", "softreboot"} {
		mux.HandleFunc("PUT "+vmi+sub, func(w http.ResponseWriter, r *http.Request) { h.act(w, r, sub) })
	}
	mux.HandleFunc("GET "+vmi+"vnc/screenshot", h.screenshot)
	h.srv = httptest.NewUnstartedServer(mux)
	h.srv.TLS = tlsConfig
	h.srv.StartTLS()
	t.Cleanup(h.srv.Close)
	return h
}

// Addr is the handler's host:port, what a resolver returns for its node.
func (h *Handler) Addr() string { return h.srv.Listener.Addr().String() }

// Answer makes the handler answer requests for subresource with st (an
// action's result, or a refused stream) from now on.
func (h *Handler) Answer(subresource string, st metav1.Status) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.answers[subresource] = st
}

// Requests returns what the handler received so far.
func (h *Handler) Requests() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Request(nil), h.requests...)
}

// record notes r and returns the answer set for sub, if any.
func (h *Handler) record(r *http.Request, sub string) (metav1.Status, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.requests = append(h.requests, Request{
		Method:       r.Method,
		Path:         r.URL.Path,
		UID:          r.URL.Query().Get("uid"),
		Subprotocols: websocket.Subprotocols(r),
	})
	st, ok := h.answers[sub]
	return st, ok
}

func (h *Handler) stream(w http.ResponseWriter, r *http.Request, sub string) {
	st, answered := h.record(r, sub)
	switch {
	case answered:
		writeStatus(w, st)
		return
	case r.URL.Query().Get("uid") == "":
		writeStatus(w, Failure(http.StatusBadRequest, metav1.StatusReasonBadRequest, "uid is required"))
		return
	case !websocket.IsWebSocketUpgrade(r):
		writeStatus(w, Failure(http.StatusBadRequest, metav1.StatusReasonBadRequest, sub+" is a WebSocket stream"))
		return
	}
	ws, err := h.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	for {
		kind, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		if err := ws.WriteMessage(kind, data); err != nil {
			return
		}
	}
}

func (h *Handler) act(w http.ResponseWriter, r *http.Request, sub string) {
	st, answered := h.record(r, sub)
	switch {
	case answered:
		writeStatus(w, st)
	case r.URL.Query().Get("uid") == "":
		writeStatus(w, Failure(http.StatusBadRequest, metav1.StatusReasonBadRequest, "uid is required"))
	default:
		writeStatus(w, metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusOK})
	}
}

// ScreenshotPNG is the fake handler's screenshot: a 4x3 PNG.
var ScreenshotPNG = func() []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 3))); err != nil {
		panic(err)
	}
	return b.Bytes()
}()

func (h *Handler) screenshot(w http.ResponseWriter, r *http.Request) {
	st, answered := h.record(r, "vnc/screenshot")
	switch {
	case answered:
		writeStatus(w, st)
	case r.URL.Query().Get("uid") == "":
		writeStatus(w, Failure(http.StatusBadRequest, metav1.StatusReasonBadRequest, "uid is required"))
	default:
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(ScreenshotPNG)
	}
}

// Failure is a Status like the handler's errors, for Answer.
func Failure(code int32, reason metav1.StatusReason, msg string) metav1.Status {
	return metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg}
}

func writeStatus(w http.ResponseWriter, st metav1.Status) {
	st.Kind, st.APIVersion = "Status", "v1"
	data, _ := json.Marshal(st)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_, _ = w.Write(data)
}
