package guestaccess

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtlisters "kubevirt.dev/virt/generated/listers/virtualization/v1"
	"kubevirt.dev/virt/internal/testpki"
	"kubevirt.dev/virt/internal/vmipod"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/fakelauncher"
	"kubevirt.dev/virt/node/monitor"
	"kubevirt.dev/virt/node/podfs"
	"kubevirt.dev/virt/node/socket"
)

const nodeName = "node-1"

// fixture is a handler's guest access served by an httptest TLS server,
// with the node's informers' caches and a monitor.
type fixture struct {
	t           *testing.T
	kubeletRoot string
	vmis        cache.Indexer
	pods        cache.Indexer
	mon         *monitor.Monitor
	synced      atomic.Bool
	server      *Server
	srv         *httptest.Server
	// ca is the virt-handler CA, of virt-apiserver's client certificate;
	// servingCA virt-controller's signer of the handlers' certificates.
	ca        *testpki.CA
	servingCA *testpki.CA
	// client is virt-apiserver's client certificate.
	client tls.Certificate
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{
		t:           t,
		kubeletRoot: filepath.Join(t.TempDir(), "var", "lib", "kubelet"),
		vmis:        cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}),
		pods:        cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{vmipod.VMIUIDIndex: vmipod.IndexByVMIUID}),
		ca:          testpki.NewCA(t, "virt-handler-ca"),
		servingCA:   testpki.NewCA(t, "virt-handler-serving-ca"),
	}
	f.synced.Store(true)
	f.mon = monitor.New(t.Context(), monitor.DefaultConfig, clock.RealClock{}, func(string) {})
	t.Cleanup(f.mon.Close)
	f.client = f.ca.Issue(t, DefaultClientName, x509.ExtKeyUsageClientAuth)
	f.server = New(Config{
		NodeName:   nodeName,
		PodFiles:   f.podFiles(),
		ClientName: DefaultClientName,
		VMIs:       virtlisters.NewVirtualMachineInstanceLister(f.vmis),
		Pods:       f.pods,
		HasSynced:  f.synced.Load,
		Launchers:  f.mon,
	})
	serving := f.servingCA.Issue(t, nodeName, x509.ExtKeyUsageServerAuth, nodeName)
	caFile := filepath.Join(testpki.WriteDir(t, f.ca, f.client), testpki.CAFile)
	tlsConfig, err := LoadTLSConfig(caFile, func() *tls.Certificate { return &serving }, DefaultClientName)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewUnstartedServer(f.server.Handler())
	f.srv.TLS = tlsConfig
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	return f
}

// clientTLS is the TLS configuration of a client of the handler, as
// virt-apiserver's: the serving CA, the node's name as the server name.
// A given certificate is always sent: Go's client would otherwise hold back
// one the server's list of acceptable CAs does not name.
func (f *fixture) clientTLS(certs ...tls.Certificate) *tls.Config {
	c := &tls.Config{RootCAs: f.servingCA.Pool(), ServerName: nodeName}
	if len(certs) > 0 {
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &certs[0], nil }
	}
	return c
}

func (f *fixture) url(scheme, ns, name, sub, uid string) string {
	return fmt.Sprintf("%s://%s/v1/namespaces/%s/virtualmachineinstances/%s/%s?uid=%s",
		scheme, f.srv.Listener.Addr().String(), ns, name, sub, uid)
}

// guest is a VMI of the fixture's node with its launcher pod.
type guest struct {
	vmi        *virtv1.VirtualMachineInstance
	pod        *corev1.Pod
	privateDir string
}

// addVMI puts a VMI in phase with its launcher pod into the caches and
// creates the pod's private directory on the "host".
func (f *fixture) addVMI(name string, phase virtv1.VirtualMachineInstancePhase) *guest {
	f.t.Helper()
	uid := types.UID(name + "-uid")
	podUID := types.UID(name + "-pod-uid")
	vmi := &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid},
		Status: virtv1.VirtualMachineInstanceStatus{
			Phase: phase, NodeName: nodeName,
			ActivePods: map[types.UID]string{podUID: nodeName},
		},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "virt-launcher-" + name, UID: podUID,
			Labels: map[string]string{virtv1.CreatedByLabel: string(uid)}},
		Spec:   corev1.PodSpec{NodeName: nodeName},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if err := f.vmis.Add(vmi); err != nil {
		f.t.Fatal(err)
	}
	if err := f.pods.Add(pod); err != nil {
		f.t.Fatal(err)
	}
	dir := layout.HostPrivateDir(f.kubeletRoot, string(podUID))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		f.t.Fatal(err)
	}
	return &guest{vmi: vmi, pod: pod, privateDir: dir}
}

// podFiles is where the fixture's launchers are; they serve as this process.
func (f *fixture) podFiles() podfs.Pods {
	return podfs.Pods{KubeletRoot: f.kubeletRoot, LauncherUID: int64(os.Getuid())}
}

// launch starts a fake launcher for g, watched as the VMI controller
// watches it, with a running domain.
func (f *fixture) launch(g *guest) (*fakelauncher.Server, *monitor.Launcher) {
	f.t.Helper()
	fake := fakelauncher.Start(f.t, g.privateDir, g.vmi)
	l, err := f.mon.Watch(monitor.Target{PodUID: g.pod.UID, VMIKey: "ns/" + g.vmi.Name, VMIUID: g.vmi.UID,
		PrivateDir: f.podFiles().PrivateDir(string(g.pod.UID))})
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := l.Sync(f.t.Context(), g.vmi, fakelauncher.NICs(g.vmi)); err != nil {
		f.t.Fatal(err)
	}
	return fake, l
}

// put sends a PUT as virt-apiserver and decodes the answered Status.
func (f *fixture) put(url string) metav1.Status {
	f.t.Helper()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: f.clientTLS(f.client)}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(f.t.Context(), http.MethodPut, url, strings.NewReader(`{}`))
	if err != nil {
		f.t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	return decodeStatus(f.t, resp)
}

func decodeStatus(t *testing.T, resp *http.Response) metav1.Status {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("answer %d %q is not a Status: %v", resp.StatusCode, body, err)
	}
	if int(st.Code) != resp.StatusCode || st.Kind != "Status" {
		t.Errorf("Status %+v answered with HTTP %d", st, resp.StatusCode)
	}
	return st
}

// dialStream opens a stream as virt-apiserver would. On a refused upgrade
// it returns the answered Status.
func (f *fixture) dialStream(url string) (*websocket.Conn, *metav1.Status) {
	f.t.Helper()
	d := websocket.Dialer{TLSClientConfig: f.clientTLS(f.client), Subprotocols: []string{Subprotocol}, HandshakeTimeout: 10 * time.Second}
	ws, resp, err := d.DialContext(f.t.Context(), url, nil)
	if err != nil {
		if resp == nil {
			f.t.Fatalf("dial %s: %v", url, err)
		}
		defer resp.Body.Close()
		st := decodeStatus(f.t, resp)
		return nil, &st
	}
	if got := ws.Subprotocol(); got != Subprotocol {
		f.t.Errorf("subprotocol = %q, want %q", got, Subprotocol)
	}
	f.t.Cleanup(func() { _ = ws.Close() })
	return ws, nil
}

// fakeSocket is QEMU's side of a console or VNC socket: it greets each
// connection with "<name> <n>\n" and echoes what it receives. Like QEMU's
// serial chardev, a sequential one accepts the next client only once the
// current one closed.
type fakeSocket struct {
	name string
	ln   net.Listener

	mu       sync.Mutex
	accepted int
	closed   int
}

func listenSocket(t *testing.T, path, name string, sequential bool) *fakeSocket {
	t.Helper()
	ln, err := socket.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeSocket{name: name, ln: ln}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.accepted++
			n := s.accepted
			s.mu.Unlock()
			if sequential {
				s.serve(conn, n)
			} else {
				go s.serve(conn, n)
			}
		}
	}()
	return s
}

func (s *fakeSocket) serve(conn net.Conn, n int) {
	defer func() {
		_ = conn.Close()
		s.mu.Lock()
		s.closed++
		s.mu.Unlock()
	}()
	if _, err := fmt.Fprintf(conn, "%s %d\n", s.name, n); err != nil {
		return
	}
	_, _ = io.Copy(conn, conn)
}

func (s *fakeSocket) counts() (accepted, closed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted, s.closed
}

// eventually waits up to 10 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("timed out after 10s waiting for %s: %v", what, err)
	}
}
