package apierror

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Request is what a failed request was for.
type Request struct {
	// Server is the API server's URL (rest.Config.Host).
	Server string
	// Verb is the RBAC verb the request needs: get, update.
	Verb string
	// Resource and Subresource, e.g. virtualmachines and stop.
	Resource, Subresource string
	Namespace, Name       string
}

// Error is an error told in words; Unwrap gives the original.
type Error struct {
	Sentence string
	Err      error
}

func (e *Error) Error() string { return e.Sentence }
func (e *Error) Unwrap() error { return e.Err }

// rbacDenial is how the API server's authorization filter words a denial.
var rbacDenial = regexp.MustCompile(`User "([^"]*)" cannot (\S+) resource "([^"]+)"`)

// Explain tells err, an error of request r, as a sentence; errors it has
// nothing to say about come back unchanged, nil as nil.
func (r Request) Explain(err error) error {
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if s := r.status(status.Status()); s != "" {
			return &Error{Sentence: s, Err: err}
		}
		return err
	}
	if untrusted(err) {
		return &Error{Sentence: fmt.Sprintf("the API server at %s presented a certificate your kubeconfig does not trust: %v", r.Server, err), Err: err}
	}
	if unreachable(err) {
		return &Error{Sentence: fmt.Sprintf("cannot reach the API server at %s: %v", r.Server, err), Err: err}
	}
	return err
}

// status words a Status the server answered with.
func (r Request) status(s metav1.Status) string {
	msg := s.Message
	switch {
	case s.Code == http.StatusNotFound || s.Reason == metav1.StatusReasonNotFound:
		if d := s.Details; d != nil && d.Name != "" && strings.HasSuffix(msg, "not found") {
			return fmt.Sprintf("%s %s not found%s", singular(orElse(d.Kind, r.Resource)), d.Name, r.in())
		}
		return fmt.Sprintf("the API server at %s does not serve %s: is virt-apiserver deployed and up to date? (kubectl get apiservice v1.virtualization.kubevirt.io)",
			r.Server, r.path())
	case s.Code == http.StatusForbidden || s.Reason == metav1.StatusReasonForbidden:
		if m := rbacDenial.FindStringSubmatch(msg); m != nil {
			return fmt.Sprintf("forbidden: you need %s on %s%s (you are %q)", m[2], m[3], r.in(), m[1])
		}
		if msg == "" {
			return fmt.Sprintf("forbidden: you need %s on %s%s", r.Verb, r.path(), r.in())
		}
		return "forbidden: " + msg
	case s.Code == http.StatusUnauthorized || s.Reason == metav1.StatusReasonUnauthorized:
		return fmt.Sprintf("unauthorized: the API server at %s did not accept your credentials (see --kubeconfig, --context, --user, --token)", r.Server)
	case s.Code == http.StatusConflict || s.Reason == metav1.StatusReasonConflict:
		// The server says why the action makes no sense now
		// ("VMI vm-x is not running (phase Scheduling)").
		return orElse(msg, fmt.Sprintf("%s %s cannot %s now", singular(r.Resource), r.Name, r.Subresource))
	case s.Code == http.StatusUnprocessableEntity || s.Reason == metav1.StatusReasonInvalid:
		return "the server refused the request: " + msg
	case s.Code == http.StatusServiceUnavailable || s.Reason == metav1.StatusReasonServiceUnavailable:
		if !aggregatorUnavailable(msg) {
			// virt-apiserver answered: its word on what is missing (a
			// node's virt-handler, say) beats a guess.
			return "the service is unavailable: " + msg
		}
		return fmt.Sprintf("virt-apiserver is not available through %s: %s (kubectl get apiservice v1.virtualization.kubevirt.io)", r.Server, msg)
	case s.Code == http.StatusMethodNotAllowed || s.Reason == metav1.StatusReasonMethodNotAllowed:
		return fmt.Sprintf("the API server at %s does not allow this request on %s: is virt-apiserver up to date? (%s)", r.Server, r.path(), msg)
	}
	return ""
}

// aggregatorUnavailable tells the message of a 503 that the kube-apiserver
// gives when it cannot reach the aggregated API server itself: its own
// Status, or client-go's words for its plain-text answer.
func aggregatorUnavailable(msg string) bool {
	return msg == "" || strings.HasPrefix(msg, "service unavailable") ||
		strings.HasPrefix(msg, "the server is currently unable to handle the request")
}

// in is " in namespace NS" for a namespaced request.
func (r Request) in() string {
	if r.Namespace == "" {
		return ""
	}
	return " in namespace " + r.Namespace
}

// path is resource/subresource.
func (r Request) path() string {
	if r.Subresource == "" {
		return r.Resource
	}
	return r.Resource + "/" + r.Subresource
}

// singular names one object of a resource: virtualmachines ->
// virtualmachine (every resource of the platform ends in s).
func singular(resource string) string {
	return strings.TrimSuffix(resource, "s")
}

func orElse(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// untrusted: the server's certificate failed verification.
func untrusted(err error) bool {
	var (
		authority x509.UnknownAuthorityError
		invalid   x509.CertificateInvalidError
		hostname  x509.HostnameError
	)
	return errors.As(err, &authority) || errors.As(err, &invalid) || errors.As(err, &hostname)
}

// unreachable: the request never got an answer from a server.
func unreachable(err error) bool {
	var (
		op     *net.OpError
		dns    *net.DNSError
		urlErr *url.Error
	)
	return errors.As(err, &op) || errors.As(err, &dns) || errors.As(err, &urlErr) ||
		errors.Is(err, syscall.ECONNREFUSED)
}
