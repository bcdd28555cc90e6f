package virtualmachineinstance

import (
	"context"
	"errors"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"kubevirt.dev/virt/apis/virtualization"
)

// The streams are WebSocket upgrades of a GET, proxied to the handler,
// which terminates the WebSocket (subprotocol plain.kubevirt.io). A GET is
// authorized as get, as KubeVirt's console and VNC are.
var streamMethods = []string{http.MethodGet}

var (
	_ rest.Connecter = &ConsoleREST{}
	_ rest.Connecter = &VNCREST{}
)

// ConsoleREST is virtualmachineinstances/console: a byte stream to the
// guest's first serial port.
type ConsoleREST struct{ *guests }

// New returns a VMI: the console has no options.
func (r *ConsoleREST) New() runtime.Object { return &virtualization.VirtualMachineInstance{} }

// Destroy does nothing: the main store owns the storage.
func (r *ConsoleREST) Destroy() {}

// NewConnectOptions returns no options.
func (r *ConsoleREST) NewConnectOptions() (runtime.Object, bool, string) { return nil, false, "" }

// ConnectMethods is GET, upgraded to a WebSocket.
func (r *ConsoleREST) ConnectMethods() []string { return streamMethods }

// Connect proxies the console of the VMI name to its handler.
func (r *ConsoleREST) Connect(ctx context.Context, name string, _ runtime.Object, responder rest.Responder) (http.Handler, error) {
	return r.stream(ctx, name, "console", responder)
}

// VNCREST is virtualmachineinstances/vnc: an RFB stream to the guest's
// graphics; and below it, at KubeVirt's URL, vnc/screenshot: a PNG of the
// guest's screen (screenshot.go).
type VNCREST struct{ *guests }

// New returns a VMI: VNC has no options.
func (r *VNCREST) New() runtime.Object { return &virtualization.VirtualMachineInstance{} }

// Destroy does nothing: the main store owns the storage.
func (r *VNCREST) Destroy() {}

// NewConnectOptions returns no options, and a path below vnc: the route of
// vnc/screenshot. k8s.io/apiserver installs only resource/subresource, and
// its request info (hence RBAC) names only the first segment after the
// object's name: a screenshot is authorized as a get of
// virtualmachineinstances/vnc.
func (r *VNCREST) NewConnectOptions() (runtime.Object, bool, string) { return nil, true, "path" }

// ConnectMethods is GET, upgraded to a WebSocket.
func (r *VNCREST) ConnectMethods() []string { return streamMethods }

// Connect proxies the VNC of the VMI name to its handler, or answers its
// screenshot.
func (r *VNCREST) Connect(ctx context.Context, name string, _ runtime.Object, responder rest.Responder) (http.Handler, error) {
	switch sub := subpath(ctx); sub {
	case "":
		return r.stream(ctx, name, "vnc", responder)
	case "screenshot":
		return r.screenshot(ctx, name, responder)
	default:
		return nil, apierrors.NewNotFound(virtualization.Resource("virtualmachineinstances/vnc"), sub)
	}
}

// subpath is what the request's path has below the subresource, without
// slashes: "screenshot" for .../NAME/vnc/screenshot.
func subpath(ctx context.Context) string {
	info, ok := request.RequestInfoFrom(ctx)
	if !ok || len(info.Parts) <= 3 {
		return ""
	}
	return strings.Trim(strings.Join(info.Parts[3:], "/"), "/")
}

// stream returns the proxy of subresource to the handler of the VMI name.
// A request without an upgrade is a 400 before the handler is dialled; the
// handler's own refusals (a Status instead of 101) reach the client as they
// are.
func (g *guests) stream(ctx context.Context, name, subresource string, responder rest.Responder) (http.Handler, error) {
	guest, err := g.find(ctx, name, subresource)
	if err != nil {
		return nil, err
	}
	return proxy.NewUpgradeAwareHandler(guest.location, guest.transport, false, true, proxyErrors{guest, responder}), nil
}

// proxyErrors answers the proxy's errors as the API does: its own
// (Upgrade request required) as they are, a handler it could not dial or
// whose certificate it refused as a 503 that names the node.
type proxyErrors struct {
	guest     *guest
	responder rest.Responder
}

func (e proxyErrors) Error(_ http.ResponseWriter, _ *http.Request, err error) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		err = unreachable(e.guest.vmi, err)
	}
	e.responder.Error(err)
}
