package streamtest

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"

	"github.com/gorilla/websocket"
	"k8s.io/client-go/rest"

	"kubevirt.dev/virt/virtctl/stream"
)

var upgrader = websocket.Upgrader{Subprotocols: []string{stream.Subprotocol}}

// Upgrade answers r with a WebSocket of subprotocol plain.kubevirt.io and
// returns the server's end as a byte stream. On error the response has been
// written.
func Upgrade(w http.ResponseWriter, r *http.Request) (*stream.Conn, error) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return nil, err
	}
	return stream.NewConn(ws), nil
}

// CloseWith closes the server's end with a close frame that carries reason,
// as virt-handler does when another console connection takes over.
func CloseWith(w http.ResponseWriter, r *http.Request, reason string) error {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return err
	}
	defer ws.Close()
	msg := websocket.FormatCloseMessage(websocket.ClosePolicyViolation, reason)
	if err := ws.WriteMessage(websocket.CloseMessage, msg); err != nil {
		return err
	}
	// Wait for the client's close frame (or its going away).
	for {
		if _, _, err := ws.NextReader(); err != nil {
			return nil
		}
	}
}

// Config is a rest.Config that reaches srv, trusting its certificate when it
// serves TLS.
func Config(srv *httptest.Server) *rest.Config {
	cfg := &rest.Config{Host: srv.URL}
	if srv.TLS != nil {
		cert := srv.Certificate()
		cfg.TLSClientConfig.CAData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
	}
	return cfg
}
