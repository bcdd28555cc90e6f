// Package virtctl is the command-line client of the platform (cmd/virtctl,
// also the kubectl plugin kubectl-virt); its packages below speak to the
// API the way any client does.
//
// Packages under virtctl/ must not import apiserver/, controllers/, node/,
// launcher/ or internal/: virtctl sees the platform only through its API
// types, its generated clientset and its subresources.
package virtctl
