// Package image assembles container images from local files and writes them
// as docker-archive tarballs: layers from existing layer tarballs, from
// directories, and from a list of single files, plus an image config.
//
// Its output is reproducible: every timestamp is the Unix epoch and entries
// are sorted, so the same inputs give the same image ID, which lets the build
// scripts skip imports of unchanged images. It knows nothing of the platform.
package image
