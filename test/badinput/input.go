package badinput

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Target names the VMI the PUT and PATCH cases aim at; it must exist
// (Set.Target) before they are sent.
const Target = "target"

// target is Target for the cases' code.
const target = Target

const (
	jsonType     = "application/json"
	yamlType     = "application/yaml"
	protobufType = "application/vnd.kubernetes.protobuf"
	mergeType    = "application/merge-patch+json"
	strategicTyp = "application/strategic-merge-patch+json"
	jsonPatchTyp = "application/json-patch+json"
	applyType    = "application/apply-patch+yaml"
)

// Input is one request a careless or hostile client sends.
type Input struct {
	Name        string
	Method      string
	Sub         string // after the collection's path: "", "/target" or "/target/status"
	ContentType string
	Query       string
	// Body makes the body; cur is the target as the server holds it now
	// (nil for POST), so a PUT can carry its resourceVersion.
	Body func(cur map[string]any) []byte
	// Taken checks a 2xx answer to an input that may be taken (WellFormed,
	// or what a hand-written case needs); nil, the input is malformed and
	// any 2xx is wrong (Judge).
	Taken Taking
}

// Set makes the cases for one namespace.
type Set struct {
	Namespace string
}

// Path is the VMI collection of the set's namespace.
func (s Set) Path() string {
	return "/apis/virtualization.kubevirt.io/v1/namespaces/" + s.Namespace + "/virtualmachineinstances"
}

// Target is the VMI to create before the cases are sent.
func (s Set) Target() *virtv1.VirtualMachineInstance { return FullVMI(s.Namespace, Target) }

// All is every case: the corpus of the repository at root, the nasty ones
// and 300 random ones of a fixed seed.
func (s Set) All(root string) ([]Input, error) {
	corpus, err := s.Corpus(root)
	if err != nil {
		return nil, err
	}
	return slices.Concat(corpus, s.Nasty(), s.Random(rand.New(rand.NewPCG(1, 2)), 300)), nil
}

// FullVMI is the valid VMI the cases vary: one of each device, so an
// invalid variant can break one thing.
func FullVMI(namespace, name string) *virtv1.VirtualMachineInstance {
	return &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: virtv1.VirtualMachineInstanceSpec{
			Domain: virtv1.DomainSpec{
				Resources: virtv1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}},
				Firmware: &virtv1.Firmware{KernelBoot: &virtv1.KernelBoot{
					KernelArgs: "console=ttyS0",
					Container:  &virtv1.KernelBootContainer{Image: "localhost/virt-guest:dev", KernelPath: "/boot/vmlinuz", InitrdPath: "/boot/initrd.gz"},
				}},
				Devices: virtv1.Devices{
					Disks: []virtv1.Disk{
						{Name: "root", BootOrder: ptr.To(uint32(1))},
						{Name: "scratch", DiskDevice: virtv1.DiskDevice{Disk: &virtv1.DiskTarget{Bus: virtv1.DiskBusSATA}}},
						{Name: "cloudinit"},
					},
					Interfaces: []virtv1.Interface{{Name: "default", InterfaceBindingMethod: virtv1.InterfaceBindingMethod{Masquerade: &virtv1.InterfaceMasquerade{}},
						Ports: []virtv1.Port{{Name: "ssh", Port: 22}}}},
				},
			},
			Networks: []virtv1.Network{{Name: "default", NetworkSource: virtv1.NetworkSource{Pod: &virtv1.PodNetwork{}}}},
			Volumes: []virtv1.Volume{
				{Name: "root", VolumeSource: virtv1.VolumeSource{ContainerDisk: &virtv1.ContainerDiskSource{Image: "localhost/virt-guest-disk:dev"}}},
				{Name: "scratch", VolumeSource: virtv1.VolumeSource{EmptyDisk: &virtv1.EmptyDiskSource{Capacity: resource.MustParse("1Gi")}}},
				{Name: "cloudinit", VolumeSource: virtv1.VolumeSource{CloudInitNoCloud: &virtv1.CloudInitNoCloudSource{UserData: "#cloud-config\n"}}},
			},
		},
	}
}

// Corpus is the fuzzer's seeds of the repository at root (and the entries
// `go test -fuzz` saved, if any), each posted as JSON-ish YAML and as JSON
// (a VM among them is a wrong kind there).
func (s Set) Corpus(root string) ([]Input, error) {
	files, err := filepath.Glob(filepath.Join(root, "apis", "virtualization", "v1", "testdata", "kubevirt", "*"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no fuzz corpus below %s: %v", root, err)
	}
	saved, _ := filepath.Glob(filepath.Join(root, "apis", "virtualization", "validation", "testdata", "fuzz", "*", "*"))
	var cases []Input
	for _, f := range slices.Concat(files, saved) {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(string(data), "go test fuzz v1\n") {
			lit := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(string(data), "go test fuzz v1\n")), "[]byte("), ")")
			s, err := strconv.Unquote(lit)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			data = []byte(s)
		}
		name := filepath.Base(f)
		cases = append(cases, taken(post("corpus "+name+" as YAML", yamlType, data)), taken(post("corpus "+name+" as JSON", jsonType, data)))
	}
	return cases, nil
}

// maxAnswer bounds the answer read: an object the server takes is at most
// its 3 MiB body limit, and its answer (Judge examines every 2xx) not much
// more.
const maxAnswer = 8 << 20

// Answer is how the server answered one case.
type Answer struct {
	Code int
	// Body is the answer (its first maxAnswer bytes); Sent is the
	// request's body;
	// Before is the target as the server held it before (JSON), for a PUT
	// or patch.
	Body, Sent, Before []byte
	// Warnings are the answer's Warning headers.
	Warnings []string
}

// Send sends one case to the server at host through hc: first a GET of the
// target for a case that needs it, then the case. The error is a
// transport error (no answer), or the target's GET failing.
func (s Set) Send(ctx context.Context, hc *http.Client, host string, c Input) (Answer, error) {
	var cur map[string]any
	var before []byte
	if c.Method != http.MethodPost {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, host+s.Path()+"/"+Target, nil)
		if err != nil {
			return Answer{}, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return Answer{}, fmt.Errorf("get the target: %w", err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return Answer{}, fmt.Errorf("get the target: %d %v %s", resp.StatusCode, err, Truncate(data))
		}
		cur, before = decodeMap(data), data
	}
	a := Answer{Sent: c.Body(cur), Before: before}
	url := host + s.Path() + c.Sub
	if c.Query != "" {
		url += "?" + c.Query
	}
	req, err := http.NewRequestWithContext(ctx, c.Method, url, bytes.NewReader(a.Sent))
	if err != nil {
		return a, err
	}
	if c.ContentType != "" {
		req.Header.Set("Content-Type", c.ContentType)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return a, err
	}
	defer resp.Body.Close()
	a.Code = resp.StatusCode
	a.Warnings = resp.Header.Values("Warning")
	a.Body, _ = io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	_, _ = io.Copy(io.Discard, resp.Body)
	return a, nil
}

// Describe names a case for a log or report line.
func Describe(c Input) string {
	return fmt.Sprintf("%s: %s %s (%s)", c.Name, c.Method, c.Sub, c.ContentType)
}

// Truncate prints the start of a body.
func Truncate(b []byte) string {
	const n = 300
	if len(b) > n {
		return fmt.Sprintf("%q... (%d bytes)", b[:n], len(b))
	}
	return fmt.Sprintf("%q", b)
}

func fixed(b []byte) func(map[string]any) []byte { return func(map[string]any) []byte { return b } }

func post(name, contentType string, body []byte) Input {
	return Input{Name: name, Method: http.MethodPost, ContentType: contentType, Body: fixed(body)}
}

// taken is c, which may be taken if it is well-formed (WellFormed).
func taken(c Input) Input {
	c.Taken = WellFormed
	return c
}

// takenIf is c, which may be taken if it is well-formed and the object
// answered passes ok; wrong says what it is when it does not.
func takenIf(c Input, wrong string, ok func(got map[string]any) bool) Input {
	c.Taken = func(c Input, a Answer) error {
		if err := WellFormed(c, a); err != nil {
			return err
		}
		if !ok(decodeMap(a.Body)) {
			return fmt.Errorf("%s", wrong)
		}
		return nil
	}
	return c
}

// vmiMap is the valid VMI, named, in the set's namespace, as maps.
func (s Set) vmiMap(name string) map[string]any {
	m := toMap(FullVMI(s.Namespace, name))
	m["apiVersion"], m["kind"] = "virtualization.kubevirt.io/v1", "VirtualMachineInstance"
	delete(m, "status")
	return m
}

// with is the valid VMI with value set at the dotted path.
func (s Set) with(name, path string, value any) map[string]any {
	m := s.vmiMap(name)
	set(m, path, value)
	return m
}

func set(m map[string]any, path string, value any) {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = value
}
