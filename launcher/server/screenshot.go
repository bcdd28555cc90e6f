package server

import (
	"context"
	"errors"
	"io"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/hypervisor"
	"kubevirt.dev/virt/launcher/screenshot"
)

// Screenshot streams a PNG of the domain's first screen; a domain not
// started, or ended, has no screen.
func (s *Server) Screenshot(_ *apiv1.ScreenshotRequest, stream apiv1.Launcher_ScreenshotServer) error {
	if !s.domain.Started() || s.domain.Final() != nil {
		return status.Errorf(codes.FailedPrecondition, "domain %s is not running", s.domain.Name())
	}
	return takeScreenshot(stream.Context(), s.conn, s.domain.Name(), stream.Send)
}

// camera takes pictures of a domain's screen (*hypervisor.Conn).
type camera interface {
	Screenshot(name string, screen uint) (mime string, picture io.ReadCloser, err error)
}

// shooting admits one screenshot at a time: each holds a decoded picture
// (up to 4 bytes per pixel of screenshot.MaxPixels), and a launcher process
// has one domain, so requests in a row must not add up in its memory.
var shooting = make(chan struct{}, 1)

// chunkSize bounds the PNG bytes of one message, well below gRPC's default
// receive limit of 4 MiB.
const chunkSize = 256 << 10

// takeScreenshot takes a picture of the first screen of domain name and
// sends it as PNG. Nothing is sent until the picture was read whole and
// found within the caps: its errors come before the first message, but a
// broken stream.
func takeScreenshot(ctx context.Context, c camera, name string, send func(*apiv1.ScreenshotChunk) error) error {
	select {
	case shooting <- struct{}{}:
		defer func() { <-shooting }()
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
	mime, picture, err := c.Screenshot(name, 0)
	switch {
	case hypervisor.IsNotFound(err), hypervisor.IsInvalidOperation(err):
		return status.Errorf(codes.FailedPrecondition, "%v", err)
	case err != nil:
		return status.Errorf(codes.Internal, "%v", err)
	}
	img, err := screenshot.Decode(mime, picture)
	closeErr := picture.Close()
	switch {
	case errors.Is(err, screenshot.ErrTooLarge):
		return status.Errorf(codes.ResourceExhausted, "screenshot of domain %s: %v", name, err)
	case err != nil:
		return status.Errorf(codes.Internal, "screenshot of domain %s: %v", name, err)
	case closeErr != nil:
		return status.Errorf(codes.Internal, "%v", closeErr)
	}
	b := img.Bounds()
	w := &chunks{send: send, first: &apiv1.ScreenshotChunk{Width: uint32(b.Dx()), Height: uint32(b.Dy())}}
	if err := screenshot.Encode(w, img); err != nil {
		return err
	}
	if w.first != nil {
		// An empty PNG cannot be: the encoder wrote nothing and said so.
		return status.Errorf(codes.Internal, "screenshot of domain %s: empty PNG", name)
	}
	return nil
}

// chunks sends what is written as messages of at most chunkSize bytes,
// the first carrying the picture's size.
type chunks struct {
	send  func(*apiv1.ScreenshotChunk) error
	first *apiv1.ScreenshotChunk
}

func (c *chunks) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), chunkSize)
		msg := c.first
		if msg == nil {
			msg = &apiv1.ScreenshotChunk{}
		}
		c.first = nil
		// gRPC may hold the message after Send returns; p is the
		// encoder's buffer.
		msg.Png = append([]byte(nil), p[:n]...)
		if err := c.send(msg); err != nil {
			return written, err
		}
		written += n
		p = p[n:]
	}
	return written, nil
}
