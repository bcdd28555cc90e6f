package vnc

import (
	"context"
	"io"
	"strconv"

	"k8s.io/client-go/rest"

	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/virtctl/stream"
)

// Subresource is the VNC subresource of virtualmachineinstances.
const Subresource = "vnc"

// ScreenshotSubresource is the screenshot's path below the VMI, KubeVirt's
// URL. RBAC sees the subresource vnc: whoever may open VNC may take one.
const ScreenshotSubresource = "vnc/screenshot"

// Dial opens the VNC stream of the VMI ns/name as cfg's user: an RFB
// session with the guest's display, the server speaking first. ctx bounds
// the dial only.
func Dial(ctx context.Context, cfg *rest.Config, ns, name string) (io.ReadWriteCloser, error) {
	return stream.Dial(ctx, cfg, ns, name, Subresource)
}

// Screenshot returns a PNG of the screen of the VMI ns/name, taken by the
// hypervisor on the guest's node (GET vnc/screenshot). moveCursor is
// KubeVirt's option; the server accepts it and moves nothing. The error is
// the API's (an *apierrors.StatusError for an answer of the server).
func Screenshot(ctx context.Context, client virtclient.Interface, ns, name string, moveCursor bool) ([]byte, error) {
	res := client.VirtualizationV1().RESTClient().Get().
		Namespace(ns).Resource("virtualmachineinstances").Name(name).SubResource("vnc", "screenshot").
		Param("moveCursor", strconv.FormatBool(moveCursor)).
		// The picture, or the API's Status in JSON.
		SetHeader("Accept", "image/png, application/json").
		Do(ctx)
	data, err := res.Raw()
	if err != nil {
		// Raw's error is the bare HTTP code; Error decodes the Status.
		return nil, res.Error()
	}
	return data, nil
}
