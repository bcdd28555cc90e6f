// Package apierror turns the errors of a request to the API (a
// metav1.Status from the server, a failed connection) into sentences a
// person can act on: what is missing, which permission to ask for, the
// server's own word on a conflict, which server could not be reached.
//
// The sentences wrap the original error, so apierrors.IsNotFound and
// friends still see it. It knows the platform's resources by name only.
package apierror
