//go:build !cgo

package embed

import (
	"context"
	"errors"
)

// errNoCgo explains how to get the ONNX embedder into a build.
var errNoCgo = errors.New("embed: this caskg was built without cgo, so it cannot run ONNX models; " +
	"rebuild with CGO_ENABLED=1 and a C compiler (make build does), or use --embedder builtin or http")

// ONNX is unavailable without cgo; NewONNX says so.
type ONNX struct{}

// NewONNX fails: ONNX Runtime needs cgo.
func NewONNX(opt ONNXOptions) (*ONNX, error) { return nil, errNoCgo }

// Close does nothing.
func (e *ONNX) Close() error { return nil }

// ID is empty.
func (e *ONNX) ID() string { return "" }

// Dim is 0.
func (e *ONNX) Dim() int { return 0 }

// Embed fails.
func (e *ONNX) Embed(ctx context.Context, texts []string) ([][]float32, error) { return nil, errNoCgo }
