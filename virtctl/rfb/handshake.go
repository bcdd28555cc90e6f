package rfb

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
)

// Version is the protocol version this client speaks.
const Version = "RFB 003.008\n"

// Security types of RFC 6143 section 7.1.2.
const (
	securityInvalid = 0
	securityNone    = 1
)

// maxPixels bounds the framebuffer a server may announce: 8192x8192, a
// 256 MiB image, far above any guest display.
const maxPixels = 8192 * 8192

// maxString bounds the strings a server sends (desktop name, reasons).
const maxString = 1 << 16

// Client is an RFB session past initialisation, its pixel format set to
// Format and its encodings to Raw. It is not safe for concurrent use.
type Client struct {
	r *bufio.Reader
	w io.Writer

	// Width and Height of the framebuffer as the server announced them.
	Width, Height int
	// Name is the desktop's name (QEMU: the guest's name).
	Name string
}

// Connect runs the handshake and initialisation on rw, a fresh connection
// to an RFB server: protocol version 3.8, security type None, a shared
// session (other viewers stay connected), then SetPixelFormat and
// SetEncodings. A server that wants a password or speaks an older version
// is refused with an error that says so.
func Connect(rw io.ReadWriter) (*Client, error) {
	c := &Client{r: bufio.NewReaderSize(rw, 64<<10), w: rw}
	if err := c.version(); err != nil {
		return nil, err
	}
	if err := c.security(); err != nil {
		return nil, err
	}
	if err := c.init(); err != nil {
		return nil, err
	}
	if err := c.write(setPixelFormat(Format)); err != nil {
		return nil, fmt.Errorf("rfb: SetPixelFormat: %w", err)
	}
	if err := c.write(setEncodings(encodingRaw)); err != nil {
		return nil, fmt.Errorf("rfb: SetEncodings: %w", err)
	}
	return c, nil
}

// version reads the server's ProtocolVersion and answers with 3.8.
func (c *Client) version() error {
	var b [12]byte
	if _, err := io.ReadFull(c.r, b[:]); err != nil {
		return fmt.Errorf("rfb: read the server's protocol version: %w", err)
	}
	var major, minor int
	if n, _ := fmt.Sscanf(string(b[:]), "RFB %03d.%03d\n", &major, &minor); n != 2 {
		return fmt.Errorf("rfb: not an RFB server: it greeted with %q", b[:])
	}
	if major != 3 || minor < 8 {
		return fmt.Errorf("rfb: the server speaks RFB %d.%d; this client needs 3.8", major, minor)
	}
	if err := c.write([]byte(Version)); err != nil {
		return fmt.Errorf("rfb: send the protocol version: %w", err)
	}
	return nil
}

// security picks security type None and reads the SecurityResult.
func (c *Client) security() error {
	n, err := c.r.ReadByte()
	if err != nil {
		return fmt.Errorf("rfb: read the security types: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("rfb: the server refused the connection: %s", c.reason())
	}
	types := make([]byte, n)
	if _, err := io.ReadFull(c.r, types); err != nil {
		return fmt.Errorf("rfb: read the security types: %w", err)
	}
	if !slices.Contains(types, securityNone) {
		return fmt.Errorf("rfb: the server wants authentication (security types %v) and this client knows only None (1)", types)
	}
	if err := c.write([]byte{securityNone}); err != nil {
		return fmt.Errorf("rfb: choose security type None: %w", err)
	}
	var result uint32
	if err := binary.Read(c.r, binary.BigEndian, &result); err != nil {
		return fmt.Errorf("rfb: read the security result: %w", err)
	}
	if result != 0 {
		return fmt.Errorf("rfb: the server refused security type None: %s", c.reason())
	}
	return nil
}

// init sends a shared ClientInit and reads the ServerInit.
func (c *Client) init() error {
	if err := c.write([]byte{1}); err != nil {
		return fmt.Errorf("rfb: ClientInit: %w", err)
	}
	var si struct {
		Width, Height uint16
		Format        [16]byte // the server's; ours replaces it
		NameLength    uint32
	}
	if err := binary.Read(c.r, binary.BigEndian, &si); err != nil {
		return fmt.Errorf("rfb: read ServerInit: %w", err)
	}
	if int(si.Width)*int(si.Height) > maxPixels {
		return fmt.Errorf("rfb: the server announced a %dx%d framebuffer, more than this client takes", si.Width, si.Height)
	}
	name, err := c.string(si.NameLength)
	if err != nil {
		return fmt.Errorf("rfb: read the desktop name: %w", err)
	}
	c.Width, c.Height, c.Name = int(si.Width), int(si.Height), name
	return nil
}

// reason reads the length-prefixed reason a server gives for a refusal.
func (c *Client) reason() string {
	var n uint32
	if err := binary.Read(c.r, binary.BigEndian, &n); err != nil {
		return "(no reason given)"
	}
	s, err := c.string(n)
	if err != nil || s == "" {
		return "(no reason given)"
	}
	return s
}

func (c *Client) string(n uint32) (string, error) {
	if n > maxString {
		return "", fmt.Errorf("a %d-byte string, more than this client takes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.r, b); err != nil {
		return "", err
	}
	return string(b), nil
}

// write sends one client message in one Write, so a message-framed
// transport (a WebSocket) carries it in one message.
func (c *Client) write(b []byte) error {
	_, err := c.w.Write(b)
	return err
}
