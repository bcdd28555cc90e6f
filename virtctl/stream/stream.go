package stream

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport/websocket"
	"k8s.io/streaming/pkg/httpstream"

	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
)

// Subprotocol is the WebSocket subprotocol of the console and VNC streams:
// binary messages carry raw bytes in both directions.
const Subprotocol = "plain.kubevirt.io"

// Dial opens the WebSocket of subresource (console, vnc) of the VMI
// ns/name, authenticated as cfg says (client certificate, bearer token,
// impersonation, proxy), and returns it as a byte stream. ctx bounds the
// dial and the upgrade only, not the stream.
//
// An error the server answered with (404, 403, 409 as a metav1.Status) is
// returned as an *apierrors.StatusError in the chain, so callers can tell
// them apart with apierrors.IsNotFound and friends.
func Dial(ctx context.Context, cfg *rest.Config, ns, name, subresource string) (*Conn, error) {
	u, err := URL(cfg, ns, name, subresource)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("open %s of %s/%s: %w", subresource, ns, name, err)
	}
	rt, holder, err := websocket.RoundTripperFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("open %s of %s/%s: transport: %w", subresource, ns, name, err)
	}
	ws, err := websocket.Negotiate(rt, holder, req, Subprotocol)
	if err != nil {
		// The upgrade failure wraps the server's Status but does not
		// unwrap to it; hand the cause on so errors.As finds it.
		var upgrade *httpstream.UpgradeFailureError
		if errors.As(err, &upgrade) && upgrade.Cause != nil {
			err = upgrade.Cause
		}
		return nil, fmt.Errorf("open %s of %s/%s: %w", subresource, ns, name, err)
	}
	return NewConn(ws), nil
}

// URL is the address of subresource of the VMI ns/name on the server of
// cfg, honouring a path prefix in cfg.Host the way the clientset does.
func URL(cfg *rest.Config, ns, name, subresource string) (string, error) {
	c, err := virtclient.NewForConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("client for %s: %w", cfg.Host, err)
	}
	return c.VirtualizationV1().RESTClient().Get().
		Namespace(ns).Resource("virtualmachineinstances").Name(name).SubResource(subresource).
		URL().String(), nil
}
