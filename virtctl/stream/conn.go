package stream

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// closeTimeout bounds how long Close waits to hand the server a close frame.
const closeTimeout = 2 * time.Second

// Conn is a WebSocket of subprotocol plain.kubevirt.io as an
// io.ReadWriteCloser. One goroutine may read while another writes.
type Conn struct {
	ws *websocket.Conn
	// r is the message being read, nil between messages.
	r io.Reader

	wmu       sync.Mutex
	closeOnce sync.Once
	closeErr  error
}

// NewConn wraps an established WebSocket.
func NewConn(ws *websocket.Conn) *Conn { return &Conn{ws: ws} }

// ClosedError is what Read returns when the server closed the stream with a
// reason, e.g. "another console connection took over": the person at the
// other end wants to know why. A close without a reason reads as io.EOF.
type ClosedError struct {
	Code   int
	Reason string
}

func (e *ClosedError) Error() string {
	return fmt.Sprintf("the server closed the stream: %s", e.Reason)
}

// Read reads the bytes of the server's messages as one stream; message
// boundaries mean nothing.
func (c *Conn) Read(p []byte) (int, error) {
	for {
		if c.r == nil {
			typ, r, err := c.ws.NextReader()
			if err != nil {
				return 0, readError(err)
			}
			if typ != websocket.BinaryMessage && typ != websocket.TextMessage {
				continue
			}
			c.r = r
		}
		n, err := c.r.Read(p)
		if err == io.EOF {
			c.r = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		if err != nil {
			return n, readError(err)
		}
		return n, nil
	}
}

// readError turns the end of the WebSocket into what an io.Reader's caller
// expects.
func readError(err error) error {
	if ce, ok := err.(*websocket.CloseError); ok {
		if ce.Text == "" && (ce.Code == websocket.CloseNormalClosure || ce.Code == websocket.CloseGoingAway) {
			return io.EOF
		}
		if ce.Text == "" {
			return &ClosedError{Code: ce.Code, Reason: fmt.Sprintf("close code %d", ce.Code)}
		}
		return &ClosedError{Code: ce.Code, Reason: ce.Text}
	}
	return err
}

// Write sends p as one binary message.
func (c *Conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.ws.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close tells the server the stream ends (a normal close frame) and closes
// the connection. It may be called more than once and concurrently with
// Read and Write, which then fail.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
		// Best effort: the server may already be gone.
		_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(closeTimeout))
		c.closeErr = c.ws.Close()
	})
	return c.closeErr
}
