package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/virtctl/cli"
)

const group = "/apis/virtualization.kubevirt.io/v1"

// received is one request the fake API server got.
type received struct {
	Method, Path string
	Body         string
	Impersonate  string
}

// fakeAPI is a kube-apiserver with virt-apiserver behind it, as far as
// virtctl sees: objects to GET, subresources to PUT or upgrade.
type fakeAPI struct {
	t   *testing.T
	srv *httptest.Server
	mux *http.ServeMux

	mu       sync.Mutex
	requests []received
	// vmis and vms by namespace/name.
	vmis map[string]*virtv1.VirtualMachineInstance
	vms  map[string]bool
	// answer, if set, answers the PUTs instead of success.
	answer *metav1.Status
}

func newFakeAPI(t *testing.T) *fakeAPI {
	a := &fakeAPI{t: t, mux: http.NewServeMux(), vmis: map[string]*virtv1.VirtualMachineInstance{}, vms: map[string]bool{}}
	a.mux.HandleFunc("GET "+group+"/namespaces/{ns}/virtualmachineinstances/{name}", a.getVMI)
	a.mux.HandleFunc("GET "+group+"/namespaces/{ns}/virtualmachines/{name}", a.getVM)
	a.mux.HandleFunc("PUT "+group+"/namespaces/{ns}/{resource}/{name}/{sub}", a.put)
	a.srv = httptest.NewServer(a)
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	a.mu.Lock()
	a.requests = append(a.requests, received{Method: r.Method, Path: r.URL.Path, Body: string(body), Impersonate: r.Header.Get("Impersonate-User")})
	a.mu.Unlock()
	a.mux.ServeHTTP(w, r)
}

func (a *fakeAPI) last() received {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.requests) == 0 {
		a.t.Fatal("no request")
	}
	return a.requests[len(a.requests)-1]
}

func (a *fakeAPI) addVMI(ns, name string, phase virtv1.VirtualMachineInstancePhase) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.vmis[ns+"/"+name] = &virtv1.VirtualMachineInstance{
		TypeMeta:   metav1.TypeMeta{APIVersion: "virtualization.kubevirt.io/v1", Kind: "VirtualMachineInstance"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "5"},
		Status:     virtv1.VirtualMachineInstanceStatus{Phase: phase},
	}
}

func (a *fakeAPI) getVMI(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	vmi := a.vmis[r.PathValue("ns")+"/"+r.PathValue("name")]
	a.mu.Unlock()
	if vmi == nil {
		writeStatus(w, &apierrors.NewNotFound(schema.GroupResource{Group: "virtualization.kubevirt.io", Resource: "virtualmachineinstances"}, r.PathValue("name")).ErrStatus)
		return
	}
	writeJSON(w, http.StatusOK, vmi)
}

func (a *fakeAPI) getVM(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	ok := a.vms[r.PathValue("ns")+"/"+r.PathValue("name")]
	a.mu.Unlock()
	if !ok {
		writeStatus(w, &apierrors.NewNotFound(schema.GroupResource{Group: "virtualization.kubevirt.io", Resource: "virtualmachines"}, r.PathValue("name")).ErrStatus)
		return
	}
	writeJSON(w, http.StatusOK, &virtv1.VirtualMachine{
		TypeMeta:   metav1.TypeMeta{APIVersion: "virtualization.kubevirt.io/v1", Kind: "VirtualMachine"},
		ObjectMeta: metav1.ObjectMeta{Namespace: r.PathValue("ns"), Name: r.PathValue("name")},
	})
}

func (a *fakeAPI) put(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	answer := a.answer
	a.mu.Unlock()
	if answer != nil {
		writeStatus(w, answer)
		return
	}
	writeStatus(w, &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusOK})
}

func writeStatus(w http.ResponseWriter, s *metav1.Status) {
	s.APIVersion, s.Kind = "v1", "Status"
	writeJSON(w, int(s.Code), s)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// kubeconfig writes a kubeconfig for the fake server whose context's
// namespace is ctx-ns.
func (a *fakeAPI) kubeconfig() string {
	path := filepath.Join(a.t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: %s
users:
- name: alice
  user:
    token: secret
contexts:
- name: fake
  context:
    cluster: fake
    user: alice
    namespace: ctx-ns
current-context: fake
`, a.srv.URL)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		a.t.Fatal(err)
	}
	return path
}

// result is what a virtctl run printed and returned.
type result struct {
	out, errOut string
	err         error
}

// run runs virtctl with args against the fake server, stdin from in.
func (a *fakeAPI) run(in io.Reader, args ...string) result {
	a.t.Helper()
	if in == nil {
		in = strings.NewReader("")
	}
	var out, errOut syncBuffer
	cmd := cli.NewCommand("/usr/bin/virtctl", genericiooptions.IOStreams{In: in, Out: &out, ErrOut: &errOut})
	cmd.SetArgs(append([]string{"--kubeconfig", a.kubeconfig()}, args...))
	err := cmd.ExecuteContext(a.t.Context())
	return result{out: out.String(), errOut: errOut.String(), err: err}
}

// syncBuffer is a bytes.Buffer for writers on several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestPluginHelpSpeaksKubectl(t *testing.T) {
	for _, tc := range []struct {
		invokedAs, want string
	}{
		{"/root/.cache/virt/kube/v1.37.1/bin/kubectl-virt", "kubectl virt console vmi-tiny"},
		{"/usr/local/bin/virtctl", "virtctl console vmi-tiny"},
	} {
		var out bytes.Buffer
		cmd := cli.NewCommand(tc.invokedAs, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
		cmd.SetArgs([]string{"console", "--help"})
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("%s console --help:\n%s\nwant %q", tc.invokedAs, out.String(), tc.want)
		}
	}
}
