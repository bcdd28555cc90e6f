package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"io"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/screenshot"
)

// receive reads a Screenshot stream to its end: the PNG, the size the
// first message announced, and how many messages came.
func receive(stream apiv1.Launcher_ScreenshotClient) (data []byte, width, height uint32, messages int, err error) {
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return data, width, height, messages, nil
		}
		if err != nil {
			return data, width, height, messages, err
		}
		if messages == 0 {
			width, height = msg.GetWidth(), msg.GetHeight()
		} else if msg.GetWidth() != 0 || msg.GetHeight() != 0 {
			return nil, 0, 0, messages, fmt.Errorf("message %d repeats the size", messages)
		}
		messages++
		data = append(data, msg.GetPng()...)
	}
}

// The test driver's screenshot is a PNG it ships (libvirt's
// test-screenshot.png); test/integration/launcher takes one of QEMU's.
func TestScreenshot(t *testing.T) {
	f := newFixture(t)
	stream, err := f.client.Screenshot(t.Context(), &apiv1.ScreenshotRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := receive(stream); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("Screenshot before Sync: %v, want FailedPrecondition", err)
	}
	if _, err := f.sync(t); err != nil {
		t.Fatal(err)
	}
	stream, err = f.client.Screenshot(t.Context(), &apiv1.ScreenshotRequest{})
	if err != nil {
		t.Fatal(err)
	}
	data, w, h, _, err := receive(stream)
	if err != nil {
		t.Fatalf("Screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); w == 0 || uint32(b.Dx()) != w || uint32(b.Dy()) != h {
		t.Errorf("PNG is %v, the first message said %dx%d", b, w, h)
	}
}

// fakeCamera hands out one picture.
type fakeCamera struct {
	mime, data string
	err        error
	closed     bool
}

func (c *fakeCamera) Screenshot(string, uint) (string, io.ReadCloser, error) {
	if c.err != nil {
		return "", nil, c.err
	}
	return c.mime, c, nil
}

func (c *fakeCamera) Read(p []byte) (int, error) {
	if c.data == "" {
		return 0, io.EOF
	}
	n := copy(p, c.data)
	c.data = c.data[n:]
	return n, nil
}

func (c *fakeCamera) Close() error { c.closed = true; return nil }

func TestTakeScreenshot(t *testing.T) {
	// A 1000x300 picture of noise does not compress: its PNG takes several
	// messages.
	var noise strings.Builder
	noise.WriteString("P6\n1000 300\n255\n")
	x := uint32(1)
	for range 1000 * 300 * 3 {
		x = x*1664525 + 1013904223
		noise.WriteByte(byte(x >> 24))
	}
	t.Run("PPM in chunks", func(t *testing.T) {
		var sent []*apiv1.ScreenshotChunk
		cam := &fakeCamera{mime: screenshot.MIMEPPM, data: noise.String()}
		err := takeScreenshot(t.Context(), cam, "d", func(c *apiv1.ScreenshotChunk) error { sent = append(sent, c); return nil })
		if err != nil {
			t.Fatal(err)
		}
		if !cam.closed {
			t.Error("the picture was not closed")
		}
		if len(sent) < 2 || sent[0].GetWidth() != 1000 || sent[0].GetHeight() != 300 {
			t.Fatalf("%d messages, the first %dx%d", len(sent), sent[0].GetWidth(), sent[0].GetHeight())
		}
		var data []byte
		for _, c := range sent {
			if len(c.GetPng()) > chunkSize {
				t.Errorf("a message of %d bytes", len(c.GetPng()))
			}
			data = append(data, c.GetPng()...)
		}
		if cfg, err := png.DecodeConfig(bytes.NewReader(data)); err != nil || cfg.Width != 1000 || cfg.Height != 300 {
			t.Errorf("PNG: %+v, %v", cfg, err)
		}
	})
	for _, tc := range []struct {
		name string
		cam  *fakeCamera
		want codes.Code
	}{
		{"a guest screen beyond the cap", &fakeCamera{mime: screenshot.MIMEPPM, data: "P6\n7680 4320\n255\n"}, codes.ResourceExhausted},
		{"garbage", &fakeCamera{mime: screenshot.MIMEPPM, data: "P5\n1 1\n255\n\x00"}, codes.Internal},
		{"a truncated picture", &fakeCamera{mime: screenshot.MIMEPPM, data: noise.String()[:1000]}, codes.Internal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent := 0
			err := takeScreenshot(t.Context(), tc.cam, "d", func(*apiv1.ScreenshotChunk) error { sent++; return nil })
			if status.Code(err) != tc.want || sent != 0 {
				t.Errorf("takeScreenshot = %v after %d messages, want %v before any", err, sent, tc.want)
			}
			if !tc.cam.closed {
				t.Error("the picture was not closed")
			}
		})
	}
}

// A screenshot waits for the one before: two decoded pictures never
// coexist in the launcher.
func TestScreenshotsOneAtATime(t *testing.T) {
	shooting <- struct{}{}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := takeScreenshot(ctx, &fakeCamera{err: errors.New("must not be called")}, "d", nil)
	<-shooting
	if status.Code(err) != codes.Canceled {
		t.Errorf("takeScreenshot while another runs, its caller gone: %v, want Canceled", err)
	}
}
