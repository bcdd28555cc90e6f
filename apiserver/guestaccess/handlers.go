package guestaccess

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// Handlers reaches the guest access of the virt-handlers: a handler's URL
// for a VMI and the transport to dial it with. Create it with New or Off.
type Handlers struct {
	resolver  Resolver
	tlsConfig *tls.Config
	// off says why guest access is not served; nil when it is.
	off error

	mu sync.Mutex
	// transports holds one transport per node, whose TLS configuration
	// names the node: a handler must present its node's certificate.
	transports map[string]*http.Transport
}

// New returns the handlers found by resolver, dialled with tlsConfig
// (LoadTLSConfig) and the node's name as the server name.
func New(resolver Resolver, tlsConfig *tls.Config) *Handlers {
	return &Handlers{resolver: resolver, tlsConfig: tlsConfig, transports: map[string]*http.Transport{}}
}

// transport returns the transport to node's handler. It checks the
// handler's certificate for the node's name, not for the address dialled:
// handlers are dialled by pod IP, and a pod IP is reused. The upgrade of
// the streams dials with the same dialer and TLS configuration
// (k8s.io/apimachinery/pkg/util/proxy checks the server name too).
// Transports of nodes that left stay until the process ends: a few idle
// structures per node, their idle connections closed after a timeout.
func (h *Handlers) transport(node string) *http.Transport {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.transports[node]; ok {
		return t
	}
	config := h.tlsConfig.Clone()
	config.ServerName = node
	// No proxy from the environment and no HTTP/2: handlers are pod IPs
	// and speak HTTP/1.1 (a custom TLS configuration keeps net/http from
	// attempting HTTP/2).
	t := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     config,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     90 * time.Second,
	}
	h.transports[node] = t
	return t
}

// Off returns handlers that answer every location with a 503 saying that
// guest access is not configured, and why.
func Off(why string) *Handlers {
	return &Handlers{off: apierrors.NewServiceUnavailable("guest access is not configured on this virt-apiserver: " + why)}
}

// Enabled reports whether guest access is served, and if not why.
func (h *Handlers) Enabled() (bool, error) { return h.off == nil, h.off }

// Start runs the resolver's informer, if it has one, until ctx ends.
func (h *Handlers) Start(ctx context.Context) {
	if s, ok := h.resolver.(interface{ Start(context.Context) }); ok {
		s.Start(ctx)
	}
}

// Location returns the URL of subresource (console, vnc, pause, unpause,
// softreboot) of the VMI namespace/name with uid on the handler of node, and
// the transport to reach it. Errors are the API's: 503 when guest access is
// off or node has no handler to reach.
func (h *Handlers) Location(node, namespace, name string, uid types.UID, subresource string) (*url.URL, http.RoundTripper, error) {
	if h.off != nil {
		return nil, nil, h.off
	}
	if node == "" {
		return nil, nil, apierrors.NewServiceUnavailable(fmt.Sprintf("VMI %s has no node yet", name))
	}
	addr, err := h.resolver.Resolve(node)
	if err != nil {
		return nil, nil, err
	}
	return &url.URL{
		Scheme:   "https",
		Host:     addr,
		Path:     Path(namespace, name, subresource),
		RawQuery: url.Values{"uid": {string(uid)}}.Encode(),
	}, h.transport(node), nil
}

// Path is the path of a VMI's subresource on a handler.
func Path(namespace, name, subresource string) string {
	return path.Join("/v1/namespaces", namespace, "virtualmachineinstances", name, subresource)
}
