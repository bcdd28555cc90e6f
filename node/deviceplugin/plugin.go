package deviceplugin

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// KubeletDir is the kubelet's device-plugin directory on the node. The
// kubelet does not move it with --root-dir.
var KubeletDir = filepath.Clean(pluginapi.DevicePluginPath)

// DefaultCheckInterval is how often a Plugin looks at its socket, at
// kubelet.sock and at the device: a restarted kubelet sees the plugin again
// within about this long.
const DefaultCheckInterval = time.Second

// Config describes one shared device.
type Config struct {
	// ResourceName is the extended resource the devices are advertised
	// as, such as devices.kubevirt.io/tun.
	ResourceName string
	// DevicePath is the device node on the node, given to a container at
	// the same path.
	DevicePath string
	// Count is how many devices are advertised: how many containers of the
	// node may hold the resource at the same time.
	Count int
	// Dir is the kubelet's device-plugin directory as this process sees it
	// (KubeletDir when it runs on the node itself): kubelet.sock is there,
	// and the plugin's socket is made there.
	Dir string
	// SocketName is the plugin's socket in Dir; the kubelet finds it there.
	SocketName string
	// HealthPath is where this process sees DevicePath; empty: DevicePath.
	// The devices are healthy while it is a character device.
	HealthPath string
	// CheckInterval: zero is DefaultCheckInterval.
	CheckInterval time.Duration
}

// Plugin advertises Count devices that all stand for the same device node.
type Plugin struct {
	pluginapi.UnimplementedDevicePluginServer

	cfg Config
	ids []string

	mu      sync.Mutex
	healthy bool
	// changed is closed, and replaced, when healthy changes: every
	// ListAndWatch stream then sends the new list.
	changed chan struct{}
}

var _ pluginapi.DevicePluginServer = (*Plugin)(nil)

// New checks cfg and returns a Plugin; Run serves it.
func New(cfg Config) (*Plugin, error) {
	switch {
	case cfg.ResourceName == "" || !strings.Contains(cfg.ResourceName, "/"):
		return nil, fmt.Errorf("device plugin: resource name %q is not an extended resource (domain/name)", cfg.ResourceName)
	case cfg.DevicePath == "" || !filepath.IsAbs(cfg.DevicePath):
		return nil, fmt.Errorf("device plugin %s: device path %q is not absolute", cfg.ResourceName, cfg.DevicePath)
	case cfg.Count < 1:
		return nil, fmt.Errorf("device plugin %s: %d devices, want at least 1", cfg.ResourceName, cfg.Count)
	case cfg.Dir == "":
		return nil, fmt.Errorf("device plugin %s: no device-plugin directory", cfg.ResourceName)
	case cfg.SocketName == "" || strings.ContainsRune(cfg.SocketName, '/') || cfg.SocketName == filepath.Base(pluginapi.KubeletSocket):
		return nil, fmt.Errorf("device plugin %s: socket name %q is not a file name of its own", cfg.ResourceName, cfg.SocketName)
	}
	if cfg.HealthPath == "" {
		cfg.HealthPath = cfg.DevicePath
	}
	if cfg.CheckInterval <= 0 {
		cfg.CheckInterval = DefaultCheckInterval
	}
	// Stable IDs: the kubelet checkpoints which pod holds which device and
	// matches them again after either of the two restarts.
	base := path.Base(cfg.ResourceName)
	ids := make([]string, cfg.Count)
	for i := range ids {
		ids[i] = base + strconv.Itoa(i)
	}
	return &Plugin{cfg: cfg, ids: ids, changed: make(chan struct{})}, nil
}

// GetDevicePluginOptions: neither PreStartContainer nor
// GetPreferredAllocation is needed, every device being the same node.
func (p *Plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{}, nil
}

// ListAndWatch sends the devices, then the devices again whenever their
// health changes, until the kubelet hangs up or the server stops.
func (p *Plugin) ListAndWatch(_ *pluginapi.Empty, stream grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	for {
		healthy, changed := p.health()
		if err := stream.Send(&pluginapi.ListAndWatchResponse{Devices: p.devices(healthy)}); err != nil {
			return err
		}
		select {
		case <-stream.Context().Done():
			return nil
		case <-changed:
		}
	}
}

// Allocate gives each container the device node once, however many of the
// devices it was allocated: they all stand for the same node.
func (p *Plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	for _, c := range req.GetContainerRequests() {
		for _, id := range c.GetDevicesIds() {
			if !slices.Contains(p.ids, id) {
				return nil, status.Errorf(codes.InvalidArgument, "%s has no device %q", p.cfg.ResourceName, id)
			}
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{
			Devices: []*pluginapi.DeviceSpec{{
				HostPath:      p.cfg.DevicePath,
				ContainerPath: p.cfg.DevicePath,
				// Read and write; no mknod.
				Permissions: "rw",
			}},
		})
	}
	return resp, nil
}

// GetPreferredAllocation is not offered (GetDevicePluginOptions); should a
// kubelet ask anyway, any devices will do: those it must include, then the
// first available ones.
func (p *Plugin) GetPreferredAllocation(_ context.Context, req *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	resp := &pluginapi.PreferredAllocationResponse{}
	for _, c := range req.GetContainerRequests() {
		ids := slices.Clone(c.GetMustIncludeDeviceIDs())
		for _, id := range c.GetAvailableDeviceIDs() {
			if len(ids) >= int(c.GetAllocationSize()) {
				break
			}
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{DeviceIDs: ids})
	}
	return resp, nil
}

// PreStartContainer has nothing to prepare; the kubelet does not call it
// (GetDevicePluginOptions).
func (p *Plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}

func (p *Plugin) devices(healthy bool) []*pluginapi.Device {
	health := pluginapi.Unhealthy
	if healthy {
		health = pluginapi.Healthy
	}
	devs := make([]*pluginapi.Device, len(p.ids))
	for i, id := range p.ids {
		devs[i] = &pluginapi.Device{ID: id, Health: health}
	}
	return devs
}

// health is the devices' health and the channel closed when it changes.
func (p *Plugin) health() (bool, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.healthy, p.changed
}

// setHealth records the devices' health and reports whether it changed.
func (p *Plugin) setHealth(healthy bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.healthy == healthy {
		return false
	}
	p.healthy = healthy
	close(p.changed)
	p.changed = make(chan struct{})
	return true
}
