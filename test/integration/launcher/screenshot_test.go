package launcher_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// TestScreenshotOfBootingGuest: a screenshot of a booting TCG guest is a
// PNG of the domain's resolution, the one QEMU's VNC server announces.
func TestScreenshotOfBootingGuest(t *testing.T) {
	l := startLauncher(t, guestVMI("shot", 30))
	if _, _, err := screenshot(l); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("Screenshot before Sync: %v, want FailedPrecondition", err)
	}
	boot(t, l)
	data, announced, err := screenshot(l)
	if err != nil {
		t.Fatalf("Screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the screenshot (%d bytes) is not a PNG: %v", len(data), err)
	}
	b := img.Bounds()
	if b.Dx() != announced[0] || b.Dy() != announced[1] {
		t.Errorf("PNG is %dx%d, the first message said %dx%d", b.Dx(), b.Dy(), announced[0], announced[1])
	}
	w, h, err := vncSize(layout.VNCSocket(l.private))
	if err != nil {
		t.Fatalf("QEMU's VNC server: %v", err)
	}
	if b.Dx() != w || b.Dy() != h {
		t.Errorf("PNG is %dx%d, the domain's screen %dx%d", b.Dx(), b.Dy(), w, h)
	}
	first, colours := img.At(0, 0), 1
	for y := 0; y < b.Dy() && colours == 1; y++ {
		for x := 0; x < b.Dx(); x++ {
			if img.At(x, y) != first {
				colours++
				break
			}
		}
	}
	if colours == 1 {
		t.Errorf("the %dx%d screenshot is all one colour: the booted kernel's console is not drawn", b.Dx(), b.Dy())
	}
	t.Logf("screenshot %dx%d, %d bytes of PNG", b.Dx(), b.Dy(), len(data))
}

// screenshot reads a Screenshot stream whole: the PNG and the size its
// first message announced.
func screenshot(l *launcher) ([]byte, [2]int, error) {
	stream, err := l.client.Screenshot(l.t.Context(), &apiv1.ScreenshotRequest{})
	if err != nil {
		return nil, [2]int{}, err
	}
	var data []byte
	var size [2]int
	for n := 0; ; n++ {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return data, size, nil
		}
		if err != nil {
			return nil, size, err
		}
		if n == 0 {
			size = [2]int{int(msg.GetWidth()), int(msg.GetHeight())}
		}
		data = append(data, msg.GetPng()...)
	}
}

// vncSize asks QEMU's VNC server for its framebuffer's size: RFB 3.8's
// handshake without authentication up to ServerInit, the oracle of the
// domain's resolution.
func vncSize(socket string) (int, int, error) {
	c, err := net.DialTimeout("unix", socket, 10*time.Second)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	version := make([]byte, 12)
	if _, err := io.ReadFull(c, version); err != nil {
		return 0, 0, fmt.Errorf("version: %w", err)
	}
	if _, err := c.Write([]byte("RFB 003.008\n")); err != nil {
		return 0, 0, err
	}
	var n [1]byte
	if _, err := io.ReadFull(c, n[:]); err != nil || n[0] == 0 {
		return 0, 0, fmt.Errorf("security types: %d, %v", n[0], err)
	}
	types := make([]byte, n[0])
	if _, err := io.ReadFull(c, types); err != nil || !bytes.Contains(types, []byte{1}) {
		return 0, 0, fmt.Errorf("security types %v without None: %v", types, err)
	}
	if _, err := c.Write([]byte{1}); err != nil {
		return 0, 0, err
	}
	var result uint32
	if err := binary.Read(c, binary.BigEndian, &result); err != nil || result != 0 {
		return 0, 0, fmt.Errorf("security result %d: %v", result, err)
	}
	if _, err := c.Write([]byte{1}); err != nil { // ClientInit: shared
		return 0, 0, err
	}
	var size [2]uint16
	if err := binary.Read(c, binary.BigEndian, &size); err != nil {
		return 0, 0, fmt.Errorf("ServerInit: %w", err)
	}
	return int(size[0]), int(size[1]), nil
}
