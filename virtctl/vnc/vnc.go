package vnc

import (
	"context"
	"fmt"
	"image"
	"io"

	"k8s.io/client-go/rest"

	"kubevirt.dev/virt/virtctl/rfb"
	"kubevirt.dev/virt/virtctl/stream"
)

// Subresource is the VNC subresource of virtualmachineinstances.
const Subresource = "vnc"

// Dial opens the VNC stream of the VMI ns/name as cfg's user: an RFB
// session with the guest's display, the server speaking first. ctx bounds
// the dial only.
func Dial(ctx context.Context, cfg *rest.Config, ns, name string) (io.ReadWriteCloser, error) {
	return stream.Dial(ctx, cfg, ns, name, Subresource)
}

// Screenshot captures the display of the VMI ns/name (RFB 3.8, shared, so
// viewers already connected stay). ctx bounds all of it.
func Screenshot(ctx context.Context, cfg *rest.Config, ns, name string) (*image.RGBA, error) {
	conn, err := Dial(ctx, cfg, ns, name)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	// RFB reads block on the stream: ending ctx closes it under them.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	img, err := rfb.Screenshot(conn)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("screenshot of %s/%s: %w", ns, name, err)
	}
	return img, nil
}
