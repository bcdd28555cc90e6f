package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// registerTimeout bounds one registration; the kubelet connects back to the
// plugin's socket before it answers.
const registerTimeout = 10 * time.Second

// Run serves the plugin and keeps it registered with the kubelet until ctx
// is done; then it stops serving and removes its socket. Every
// CheckInterval it looks at the device's health, at its socket (gone: the
// kubelet restarted and removed it, so it serves again on a new one) and at
// kubelet.sock (new: a kubelet that does not know the plugin, so it
// registers again). Failures are logged and retried at the next check.
func (p *Plugin) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("resource", p.cfg.ResourceName)
	kubeletSocket := filepath.Join(p.cfg.Dir, filepath.Base(pluginapi.KubeletSocket))
	ticker := time.NewTicker(p.cfg.CheckInterval)
	defer ticker.Stop()

	var (
		ep *endpoint
		// registeredWith is the kubelet.sock the plugin registered
		// through; nil: not registered.
		registeredWith os.FileInfo
		lastErr        string
	)
	defer func() {
		if ep != nil {
			ep.stop()
			logger.Info("Device plugin stopped", "socket", ep.path)
		}
	}()
	// fail logs a failure once, not at every check while it lasts.
	fail := func(err error, msg string) {
		if err.Error() != lastErr {
			logger.Error(err, msg)
			lastErr = err.Error()
		} else {
			logger.V(4).Info(msg, "err", err)
		}
	}
	for first := true; ; first = false {
		p.checkHealth(logger, first)

		if ep != nil && !ep.present() {
			logger.Info("Device plugin socket gone, the kubelet restarted: serving again", "socket", ep.path)
			ep.stop()
			ep, registeredWith = nil, nil
		}
		if ep == nil {
			var err error
			if ep, err = p.serve(logger); err != nil {
				fail(err, "Device plugin not served")
			}
		}
		if ep != nil {
			kubelet, err := os.Stat(kubeletSocket)
			switch {
			case err != nil:
				registeredWith = nil
				fail(err, "Kubelet not there to register with")
			case registeredWith != nil && sameFile(registeredWith, kubelet):
				// Registered with the kubelet that listens there now.
			default:
				if err := p.register(ctx, kubeletSocket); err != nil {
					fail(err, "Device plugin not registered")
					break
				}
				registeredWith, lastErr = kubelet, ""
				logger.Info("Device plugin registered with the kubelet", "socket", ep.path, "devices", len(p.ids), "device", p.cfg.DevicePath)
			}
		}

		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// checkHealth: the devices are healthy while the device node is there.
func (p *Plugin) checkHealth(logger klog.Logger, first bool) {
	fi, err := os.Stat(p.cfg.HealthPath)
	healthy := err == nil && fi.Mode()&fs.ModeCharDevice != 0
	if p.setHealth(healthy) || first {
		if healthy {
			logger.Info("Devices healthy", "device", p.cfg.HealthPath)
		} else {
			// Without the node no container can be given it: the kubelet
			// stops admitting pods that request the resource.
			logger.Info("Devices unhealthy: no character device", "device", p.cfg.HealthPath, "err", err)
		}
	}
}

// register tells the kubelet listening on kubeletSocket about the plugin.
func (p *Plugin) register(ctx context.Context, kubeletSocket string) error {
	ctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+kubeletSocket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("connect to the kubelet: %w", err)
	}
	defer conn.Close()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     p.cfg.SocketName,
		ResourceName: p.cfg.ResourceName,
		Options:      &pluginapi.DevicePluginOptions{},
	})
	if err != nil {
		return fmt.Errorf("register %s with the kubelet: %w", p.cfg.ResourceName, err)
	}
	return nil
}

// An endpoint is the plugin served on one socket.
type endpoint struct {
	path string
	// info identifies the socket file this endpoint made.
	info os.FileInfo
	srv  *grpc.Server
	done chan struct{}
}

// serve listens on the plugin's socket, replacing a stale one (of an
// earlier run of this process, say), and serves the plugin there.
func (p *Plugin) serve(logger klog.Logger) (*endpoint, error) {
	path := filepath.Join(p.cfg.Dir, p.cfg.SocketName)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove the stale socket: %w", err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	// The kubelet removes the socket when it restarts, and a socket at the
	// path later is not this listener's to remove: stop does it, checked.
	ln.SetUnlinkOnClose(false)
	info, err := os.Stat(path)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen: %w", err)
	}
	srv := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(srv, p)
	ep := &endpoint{path: path, info: info, srv: srv, done: make(chan struct{})}
	go func() {
		defer close(ep.done)
		if err := srv.Serve(ln); err != nil {
			logger.Error(err, "Device plugin server stopped", "socket", path)
		}
	}()
	return ep, nil
}

// present reports whether the endpoint's socket is still in place.
func (e *endpoint) present() bool {
	fi, err := os.Stat(e.path)
	return err == nil && sameFile(fi, e.info)
}

// stop ends the server, its ListAndWatch streams with it (a graceful stop
// would wait for them forever), and removes the socket if it is still the
// one the endpoint made.
func (e *endpoint) stop() {
	e.srv.Stop()
	<-e.done
	if e.present() {
		_ = os.Remove(e.path)
	}
}

// sameFile is os.SameFile that also compares the change time: a file made
// again at once may get the inode number its predecessor freed.
func sameFile(a, b os.FileInfo) bool {
	if !os.SameFile(a, b) {
		return false
	}
	sa, okA := a.Sys().(*syscall.Stat_t)
	sb, okB := b.Sys().(*syscall.Stat_t)
	return okA && okB && sa.Ctim == sb.Ctim
}
