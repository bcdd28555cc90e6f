package deviceplugin

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2/ktesting"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

const (
	testResource = "devices.kubevirt.io/tun"
	testSocket   = "virt-tun.sock"
)

// testConfig is a plugin of three devices in a directory of its own, whose
// health follows a symlink to /dev/null, a character device the test can
// take away and give back.
func testConfig(t *testing.T) Config {
	t.Helper()
	device := filepath.Join(t.TempDir(), "tun")
	if err := os.Symlink("/dev/null", device); err != nil {
		t.Fatal(err)
	}
	return Config{
		ResourceName:  testResource,
		DevicePath:    "/dev/net/tun",
		Count:         3,
		Dir:           t.TempDir(),
		SocketName:    testSocket,
		HealthPath:    device,
		CheckInterval: 10 * time.Millisecond,
	}
}

// runPlugin runs a plugin of cfg until the returned stop, or the test's
// end; stop returns once Run did.
func runPlugin(t *testing.T, cfg Config) (stop func()) {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx)
	}()
	var stopped bool
	stop = func() {
		t.Helper()
		if stopped {
			return
		}
		stopped = true
		cancel()
		receive(t, done, "Run to return")
	}
	t.Cleanup(stop)
	return stop
}

func wantDevices(t *testing.T, got []*pluginapi.Device, health string) {
	t.Helper()
	want := []*pluginapi.Device{{ID: "tun0", Health: health}, {ID: "tun1", Health: health}, {ID: "tun2", Health: health}}
	if d := cmp.Diff(want, got, protocmp.Transform()); d != "" {
		t.Errorf("devices (-want +got):\n%s", d)
	}
}

func TestRegisterListAllocate(t *testing.T) {
	cfg := testConfig(t)
	k := startKubelet(t, cfg.Dir)
	stop := runPlugin(t, cfg)

	req := receive(t, k.registrations, "the registration")
	if req.Version != pluginapi.Version || req.Endpoint != testSocket || req.ResourceName != testResource {
		t.Errorf("registration %v, want version %s, endpoint %s, resource %s", req, pluginapi.Version, testSocket, testResource)
	}
	if o := req.Options; o.GetPreStartRequired() || o.GetGetPreferredAllocationAvailable() {
		t.Errorf("registration options %v ask the kubelet for calls the plugin has no use for", o)
	}
	wantDevices(t, receive(t, k.lists, "the device list"), pluginapi.Healthy)

	plugin := dialPlugin(t, filepath.Join(cfg.Dir, testSocket))
	resp, err := plugin.Allocate(t.Context(), &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIds: []string{"tun0"}},
		{DevicesIds: []string{"tun1", "tun2"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	tun := &pluginapi.ContainerAllocateResponse{Devices: []*pluginapi.DeviceSpec{
		{HostPath: "/dev/net/tun", ContainerPath: "/dev/net/tun", Permissions: "rw"},
	}}
	want := &pluginapi.AllocateResponse{ContainerResponses: []*pluginapi.ContainerAllocateResponse{tun, tun}}
	if d := cmp.Diff(want, resp, protocmp.Transform()); d != "" {
		t.Errorf("Allocate (-want +got):\n%s", d)
	}
	_, err = plugin.Allocate(t.Context(), &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIds: []string{"tun3"}},
	}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("Allocate of a device the plugin does not have: %v, want InvalidArgument", err)
	}
	if _, err := plugin.PreStartContainer(t.Context(), &pluginapi.PreStartContainerRequest{DevicesIds: []string{"tun0"}}); err != nil {
		t.Errorf("PreStartContainer: %v", err)
	}

	stop()
	if _, err := os.Lstat(filepath.Join(cfg.Dir, testSocket)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the plugin's socket after Run returned: %v, want it removed", err)
	}
	if _, err := os.Lstat(filepath.Join(cfg.Dir, "kubelet.sock")); err != nil {
		t.Errorf("kubelet.sock after the plugin stopped: %v, want it left alone", err)
	}
}

// A kubelet that starts removes the plugins' sockets and knows no plugin:
// the plugin serves again and registers again. A new kubelet.sock alone,
// the plugin's socket left in place, is a new kubelet too.
func TestRegistersAgainAfterKubeletRestart(t *testing.T) {
	for _, removeSockets := range []bool{true, false} {
		name := "plugin socket removed"
		if !removeSockets {
			name = "plugin socket kept"
		}
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(t)
			k := startKubelet(t, cfg.Dir)
			runPlugin(t, cfg)
			receive(t, k.registrations, "the first registration")
			wantDevices(t, receive(t, k.lists, "the first device list"), pluginapi.Healthy)

			k.restart(removeSockets)

			req := receive(t, k.registrations, "the registration after the kubelet's restart")
			if req.Endpoint != testSocket || req.ResourceName != testResource {
				t.Errorf("registration %v", req)
			}
			wantDevices(t, receive(t, k.lists, "the device list after the kubelet's restart"), pluginapi.Healthy)
			resp, err := dialPlugin(t, filepath.Join(cfg.Dir, testSocket)).Allocate(t.Context(),
				&pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"tun1"}}}})
			if err != nil || len(resp.ContainerResponses) != 1 {
				t.Errorf("Allocate after the kubelet's restart: %v, %v", resp, err)
			}
		})
	}
}

// A plugin that starts before the kubelet registers once it is there.
func TestRegistersWithALaterKubelet(t *testing.T) {
	cfg := testConfig(t)
	runPlugin(t, cfg)
	// It serves before any kubelet is there.
	socket := filepath.Join(cfg.Dir, testSocket)
	err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, err := os.Stat(socket)
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("no plugin socket without a kubelet: %v", err)
	}
	if _, err := dialPlugin(t, socket).GetDevicePluginOptions(t.Context(), &pluginapi.Empty{}); err != nil {
		t.Fatalf("the plugin does not serve without a kubelet: %v", err)
	}

	k := startKubelet(t, cfg.Dir)

	receive(t, k.registrations, "the registration with a kubelet started later")
	wantDevices(t, receive(t, k.lists, "the device list"), pluginapi.Healthy)
}

func TestHealthFollowsTheDevice(t *testing.T) {
	cfg := testConfig(t)
	k := startKubelet(t, cfg.Dir)
	runPlugin(t, cfg)
	receive(t, k.registrations, "the registration")
	wantDevices(t, receive(t, k.lists, "the device list"), pluginapi.Healthy)

	if err := os.Remove(cfg.HealthPath); err != nil {
		t.Fatal(err)
	}
	wantDevices(t, receive(t, k.lists, "the list after the device vanished"), pluginapi.Unhealthy)

	if err := os.Symlink("/dev/null", cfg.HealthPath); err != nil {
		t.Fatal(err)
	}
	wantDevices(t, receive(t, k.lists, "the list after the device came back"), pluginapi.Healthy)

	// A file of that name is no device.
	if err := os.Remove(cfg.HealthPath); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg.HealthPath, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wantDevices(t, receive(t, k.lists, "the list after the device became a regular file"), pluginapi.Unhealthy)
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
	}{
		{"no resource", func(c *Config) { c.ResourceName = "" }},
		{"no domain", func(c *Config) { c.ResourceName = "tun" }},
		{"relative device", func(c *Config) { c.DevicePath = "dev/net/tun" }},
		{"no devices", func(c *Config) { c.Count = 0 }},
		{"no directory", func(c *Config) { c.Dir = "" }},
		{"no socket", func(c *Config) { c.SocketName = "" }},
		{"socket in another directory", func(c *Config) { c.SocketName = "../virt-tun.sock" }},
		{"the kubelet's socket", func(c *Config) { c.SocketName = "kubelet.sock" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{ResourceName: testResource, DevicePath: "/dev/net/tun", Count: 1, Dir: t.TempDir(), SocketName: testSocket}
			tt.mutate(&cfg)
			if _, err := New(cfg); err == nil {
				t.Errorf("New(%+v) = no error", cfg)
			}
		})
	}
}

func TestGetPreferredAllocation(t *testing.T) {
	p, err := New(Config{ResourceName: testResource, DevicePath: "/dev/net/tun", Count: 4, Dir: t.TempDir(), SocketName: testSocket})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.GetPreferredAllocation(t.Context(), &pluginapi.PreferredAllocationRequest{ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{
		{AvailableDeviceIDs: []string{"tun1", "tun2", "tun3"}, MustIncludeDeviceIDs: []string{"tun2"}, AllocationSize: 2},
		{AvailableDeviceIDs: []string{"tun0", "tun3"}, AllocationSize: 1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, c := range resp.ContainerResponses {
		got = append(got, c.DeviceIDs)
	}
	if want := [][]string{{"tun2", "tun1"}, {"tun0"}}; !slices.EqualFunc(want, got, slices.Equal) {
		t.Errorf("preferred %v, want %v", got, want)
	}
}
