package deviceplugin

import (
	"context"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// fakeKubelet is the kubelet's side of device plugins on a real gRPC unix
// socket, kubelet.sock in dir: it accepts registrations and, as the
// kubelet does, connects back to the plugin's endpoint, asks for its
// options and watches its devices.
type fakeKubelet struct {
	pluginapi.UnimplementedRegistrationServer

	t   *testing.T
	dir string
	// registrations receives every registration it answered.
	registrations chan *pluginapi.RegisterRequest
	// lists receives every device list a plugin sent.
	lists chan []*pluginapi.Device

	mu     sync.Mutex
	srv    *grpc.Server
	ctx    context.Context
	cancel context.CancelFunc
	conns  []*grpc.ClientConn
	done   chan struct{}
}

func startKubelet(t *testing.T, dir string) *fakeKubelet {
	t.Helper()
	k := &fakeKubelet{
		t:             t,
		dir:           dir,
		registrations: make(chan *pluginapi.RegisterRequest, 16),
		lists:         make(chan []*pluginapi.Device, 64),
	}
	k.start(true)
	t.Cleanup(k.stop)
	return k
}

// start listens on kubelet.sock; a kubelet starting removes every socket of
// the directory first (removeSockets), its plugins' too.
func (k *fakeKubelet) start(removeSockets bool) {
	k.t.Helper()
	entries, err := os.ReadDir(k.dir)
	if err != nil {
		k.t.Fatal(err)
	}
	for _, e := range entries {
		if removeSockets && e.Type()&fs.ModeSocket != 0 {
			if err := os.Remove(filepath.Join(k.dir, e.Name())); err != nil {
				k.t.Fatal(err)
			}
		}
	}
	ln, err := net.Listen("unix", filepath.Join(k.dir, filepath.Base(pluginapi.KubeletSocket)))
	if err != nil {
		k.t.Fatal(err)
	}
	srv := grpc.NewServer()
	pluginapi.RegisterRegistrationServer(srv, k)
	k.mu.Lock()
	k.srv, k.done = srv, make(chan struct{})
	k.ctx, k.cancel = context.WithCancel(context.Background())
	done := k.done
	k.mu.Unlock()
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
}

// stop ends the kubelet: its server (which removes kubelet.sock) and its
// connections to plugins.
func (k *fakeKubelet) stop() {
	k.mu.Lock()
	srv, done, cancel, conns := k.srv, k.done, k.cancel, k.conns
	k.srv, k.conns = nil, nil
	k.mu.Unlock()
	if srv == nil {
		return
	}
	cancel()
	srv.Stop()
	<-done
	for _, c := range conns {
		c.Close()
	}
}

// restart is a kubelet restart; removeSockets: as the kubelet does.
func (k *fakeKubelet) restart(removeSockets bool) {
	k.t.Helper()
	k.stop()
	k.start(removeSockets)
}

func (k *fakeKubelet) Register(ctx context.Context, req *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	conn, err := grpc.NewClient("unix://"+filepath.Join(k.dir, req.Endpoint), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	k.conns = append(k.conns, conn)
	watchCtx := k.ctx
	k.mu.Unlock()
	client := pluginapi.NewDevicePluginClient(conn)
	if _, err := client.GetDevicePluginOptions(ctx, &pluginapi.Empty{}); err != nil {
		return nil, err
	}
	stream, err := client.ListAndWatch(watchCtx, &pluginapi.Empty{})
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			resp, err := stream.Recv()
			if err != nil {
				return
			}
			select {
			case k.lists <- resp.Devices:
			case <-watchCtx.Done():
				return
			}
		}
	}()
	k.registrations <- req
	return &pluginapi.Empty{}, nil
}

// receive waits up to 10 s for a value from ch.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out after 10s waiting for %s", what)
		panic("unreachable")
	}
}

// dialPlugin is a client of the plugin's socket, as the kubelet has one.
func dialPlugin(t *testing.T, socket string) pluginapi.DevicePluginClient {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pluginapi.NewDevicePluginClient(conn)
}
