package guestaccess

import (
	"context"
	"errors"
	"io"
	"net"
	"time"

	"github.com/gorilla/websocket"
)

// closeTimeout bounds sending a close frame and waiting for the client's.
const closeTimeout = 2 * time.Second

// Close reasons sent to the client.
const (
	// TakenOver closes a console whose VMI got a newer console connection.
	TakenOver = "another console connection took over"
	// GuestClosed: QEMU closed the socket (the guest stopped).
	GuestClosed = "the guest closed the stream"
	// ShuttingDown: virt-handler stops.
	ShuttingDown = "virt-handler is shutting down"
)

// pipe copies bytes between the WebSocket ws and the socket conn until one
// side ends, stop is closed or ctx is done, and closes both: the client gets
// a close frame saying why (unless it closed first, then its own is
// answered), and conn is closed before the client's answer is awaited, so
// the socket is free as soon as possible. It returns why it ended.
func pipe(ctx context.Context, ws *websocket.Conn, conn net.Conn, stop <-chan struct{}) string {
	fromClient := make(chan error, 1)
	go func() { fromClient <- copyFromClient(conn, ws) }()
	toClient := make(chan error, 1)
	go func() { toClient <- copyToClient(ws, conn) }()

	code, reason, why := websocket.CloseNormalClosure, "", ""
	copying := true
	select {
	case err := <-fromClient:
		// The client's close frame was answered by the WebSocket's default
		// close handler, or the connection broke: nothing more to say.
		_ = conn.Close()
		_ = ws.Close()
		<-toClient
		return "client closed: " + err.Error()
	case err := <-toClient:
		copying = false
		switch {
		case errors.Is(err, io.EOF):
			reason = GuestClosed
		case errors.Is(err, errClientWrite):
			why = "client gone: " + err.Error()
		default:
			code, reason = websocket.CloseInternalServerErr, "reading the guest's stream failed"
			why = reason + ": " + err.Error()
		}
	case <-stop:
		reason = TakenOver
	case <-ctx.Done():
		code, reason = websocket.CloseGoingAway, ShuttingDown
	}
	_ = conn.Close()
	_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(closeTimeout))
	select {
	case <-fromClient:
	case <-time.After(closeTimeout):
	}
	_ = ws.Close()
	if copying {
		<-toClient
	}
	if why == "" {
		why = reason
	}
	return why
}

// errClientWrite marks a failed write to the client.
var errClientWrite = errors.New("write to the client")

// copyToClient sends what the socket delivers as binary messages until the
// socket ends (io.EOF) or the client cannot be written.
func copyToClient(ws *websocket.Conn, src io.Reader) error {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if werr := ws.WriteMessage(websocket.BinaryMessage, buf[:n]); werr != nil {
				return errors.Join(errClientWrite, werr)
			}
		}
		if err != nil {
			return err
		}
	}
}

// copyFromClient writes the client's messages, binary or text, to the
// socket until the client's side ends. Once the socket refuses writes the
// messages are dropped: the socket's end shows on the other direction.
func copyFromClient(dst io.Writer, ws *websocket.Conn) error {
	broken := false
	for {
		_, r, err := ws.NextReader()
		if err != nil {
			return err
		}
		if broken {
			_, _ = io.Copy(io.Discard, r)
			continue
		}
		if _, err := io.Copy(dst, r); err != nil {
			broken = true
		}
	}
}
