package console

import (
	"context"
	"io"

	"k8s.io/client-go/rest"

	"kubevirt.dev/virt/virtctl/stream"
)

// Subresource is the console's subresource of virtualmachineinstances.
const Subresource = "console"

// Dial opens the serial console of the VMI ns/name as cfg's user: the bytes
// read are the guest's output, the bytes written its input. There is one
// interactive console per VMI: a newer connection takes over, and this one
// then reads a *stream.ClosedError saying so. ctx bounds the dial only.
func Dial(ctx context.Context, cfg *rest.Config, ns, name string) (io.ReadWriteCloser, error) {
	return stream.Dial(ctx, cfg, ns, name, Subresource)
}
