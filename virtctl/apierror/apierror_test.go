package apierror_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/virtctl/apierror"
)

var (
	vms  = schema.GroupResource{Group: "virtualization.kubevirt.io", Resource: "virtualmachines"}
	vmis = schema.GroupResource{Group: "virtualization.kubevirt.io", Resource: "virtualmachineinstances"}
)

func stop(server string) apierror.Request {
	return apierror.Request{Server: server, Verb: "update", Resource: "virtualmachines", Subresource: "stop", Namespace: "ns", Name: "x"}
}

func status(code int32, reason metav1.StatusReason, msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg}}
}

func TestExplainStatus(t *testing.T) {
	const server = "https://198.18.0.1:6443"
	forbidden := apierrors.NewForbidden(vms, "x", errors.New(`User "bob" cannot update resource "virtualmachines/stop" in API group "virtualization.kubevirt.io" in the namespace "ns"`))
	for _, tc := range []struct {
		name string
		req  apierror.Request
		err  error
		want string
	}{
		{name: "missing object", req: stop(server), err: apierrors.NewNotFound(vms, "x"),
			want: "virtualmachine x not found in namespace ns"},
		{name: "the missing object is the server's to name", req: apierror.Request{Server: server, Verb: "update", Resource: "virtualmachineinstances", Subresource: "pause", Namespace: "ns", Name: "x"},
			err: apierrors.NewNotFound(vmis, "x"), want: "virtualmachineinstance x not found in namespace ns"},
		{name: "missing route", req: stop(server), err: status(404, metav1.StatusReasonNotFound, "the server could not find the requested resource"),
			want: "the API server at https://198.18.0.1:6443 does not serve virtualmachines/stop: is virt-apiserver deployed and up to date? (kubectl get apiservice v1.virtualization.kubevirt.io)"},
		{name: "forbidden by RBAC", req: stop(server), err: forbidden,
			want: `forbidden: you need update on virtualmachines/stop in namespace ns (you are "bob")`},
		{name: "forbidden for another reason", req: stop(server), err: status(403, metav1.StatusReasonForbidden, "admission says no"),
			want: "forbidden: admission says no"},
		{name: "forbidden without a word", req: stop(server), err: status(403, "", ""),
			want: "forbidden: you need update on virtualmachines/stop in namespace ns"},
		{name: "conflict is the server's word", req: stop(server), err: status(409, metav1.StatusReasonConflict, "VMI vm-x is not running (phase Scheduling)"),
			want: "VMI vm-x is not running (phase Scheduling)"},
		{name: "unauthorized", req: stop(server), err: apierrors.NewUnauthorized("Unauthorized"),
			want: "unauthorized: the API server at https://198.18.0.1:6443 did not accept your credentials (see --kubeconfig, --context, --user, --token)"},
		{name: "invalid", req: stop(server), err: status(422, metav1.StatusReasonInvalid, `StopOptions "" is invalid: gracePeriod: Invalid value: -1: must be 0 or more`),
			want: `the server refused the request: StopOptions "" is invalid: gracePeriod: Invalid value: -1: must be 0 or more`},
		{name: "virt-apiserver down", req: stop(server), err: apierrors.NewServiceUnavailable("service unavailable"),
			want: "virt-apiserver is not available through https://198.18.0.1:6443: service unavailable (kubectl get apiservice v1.virtualization.kubevirt.io)"},
		{name: "virt-apiserver down, in client-go's words", req: stop(server),
			err:  apierrors.NewGenericServerResponse(503, "PUT", vms, "x", "service unavailable", 0, true),
			want: "virt-apiserver is not available through https://198.18.0.1:6443: the server is currently unable to handle the request (put virtualmachines.virtualization.kubevirt.io x) (kubectl get apiservice v1.virtualization.kubevirt.io)"},
		{name: "missing route, in client-go's words", req: stop(server),
			err:  apierrors.NewGenericServerResponse(404, "PUT", vms, "x", "404 page not found", 0, true),
			want: "the API server at https://198.18.0.1:6443 does not serve virtualmachines/stop: is virt-apiserver deployed and up to date? (kubectl get apiservice v1.virtualization.kubevirt.io)"},
		{name: "virt-apiserver's own 503", req: stop(server), err: apierrors.NewServiceUnavailable("no virt-handler on node n1"),
			want: "the service is unavailable: no virt-handler on node n1"},
		{name: "wrapped", req: stop(server), err: fmt.Errorf("stop ns/x: %w", apierrors.NewNotFound(vms, "x")),
			want: "virtualmachine x not found in namespace ns"},
		{name: "an internal error stays", req: stop(server), err: apierrors.NewInternalError(errors.New("boom")),
			want: "Internal error occurred: boom"},
		{name: "not an API error", req: stop(server), err: errors.New("something else"), want: "something else"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.req.Explain(tc.err)
			if got.Error() != tc.want {
				t.Errorf("Explain:\n got %s\nwant %s", got, tc.want)
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("Explain: %v does not wrap %v", got, tc.err)
			}
		})
	}
	if (apierror.Request{}).Explain(nil) != nil {
		t.Error("Explain(nil) is not nil")
	}
}

// TestExplainUnreachable: the errors of a real client for a server that
// is gone, or whose certificate is not trusted, name the server.
func TestExplainUnreachable(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	untrusted := httptest.NewTLSServer(http.NotFoundHandler())
	defer untrusted.Close()
	for _, tc := range []struct {
		name   string
		server string
		want   string
	}{
		{name: "connection refused", server: gone.URL, want: "cannot reach the API server at " + gone.URL + ": "},
		{name: "certificate not trusted", server: untrusted.URL, want: "the API server at " + untrusted.URL + " presented a certificate your kubeconfig does not trust: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := virtclient.NewForConfig(&rest.Config{Host: tc.server})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.VirtualizationV1().VirtualMachines("ns").Stop(t.Context(), "x", &virtv1.StopOptions{}, metav1.UpdateOptions{})
			got := stop(tc.server).Explain(err)
			if got == nil || len(got.Error()) < len(tc.want) || got.Error()[:len(tc.want)] != tc.want {
				t.Errorf("Explain(%v):\n got %v\nwant %s...", err, got, tc.want)
			}
		})
	}
}
