package host_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"testing"
	"time"

	"github.com/caskg/caskg/graphs"
	"github.com/caskg/caskg/native/testlib"
	"github.com/caskg/caskg/wasm/host"
)

// tinyArtifact is an artifact of six sample skills: small enough for the fuzzer to mutate.
func tinyArtifact(tb testing.TB) []byte {
	tb.Helper()
	data, err := testlib.BuildPlain(sampleLib, 6)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// reseal rewrites the checksum of bytes that start like an artifact, so that mutations reach
// the decoder's validation and the engine instead of stopping at the checksum.
func reseal(b []byte) []byte {
	if len(b) < 16 || string(b[:4]) != graphs.Magic {
		return b
	}
	b = append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(b[12:], crc32.Checksum(b[16:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// FuzzWASM feeds random artifacts and random request JSON through wazero: the module must
// answer every call — with a result or with {"error"} — and never trap, exit or hang.
//
// Run it with a short -fuzzminimizetime (make fuzz uses 2s): the Go runtime inside the module
// and wazero around it make coverage vary from run to run, so many inputs look new, and the
// default minute of minimizing each would leave no time for fuzzing.
func FuzzWASM(f *testing.F) {
	tiny := tinyArtifact(f)
	flipped := append([]byte(nil), tiny...)
	flipped[len(flipped)*2/3] ^= 0x55
	f.Add(tiny, []byte(`{"query":"heat some egg","k":3}`), false)
	f.Add(flipped, []byte(`{"query":"pick up the mug","no_graph":true,"seeds":1}`), true)
	f.Add(tiny[:100], []byte(`{"query":"x","gamma":1e-300,"k":1000}`), true)
	f.Add([]byte{}, []byte(`{}`), false)
	f.Add([]byte("\x00skg\x01\x00\x00\x00"), []byte(`{"query":"\ud800 \u0000 <&>","vector":[1,2,3]}`), true)
	f.Add([]byte("not an artifact"), []byte(`[[[[[[[[[[[[`), false)

	ctx := context.Background()
	m := compile(f, host.Options{Instances: 1, Interruptible: true})
	good, err := m.Load(ctx, tiny)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { good.Close(ctx) })

	// ok fails the test for anything but success or an error the module reported.
	ok := func(t *testing.T, what string, err error) bool {
		t.Helper()
		var me *host.Error
		if err != nil && !errors.As(err, &me) {
			t.Fatalf("%s: %v", what, err)
		}
		return err == nil
	}
	f.Fuzz(func(t *testing.T, artifact, req []byte, resealed bool) {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if resealed {
			artifact = reseal(artifact)
		}
		pools := []*host.Pool{good}
		p, err := m.Load(ctx, artifact)
		if ok(t, "loading the artifact", err) {
			defer p.Close(ctx)
			pools = append(pools, p)
		}
		for _, pool := range pools {
			out, err := pool.QueryJSON(ctx, req)
			if ok(t, "query "+string(req), err) && !json.Valid(out) {
				t.Fatalf("query %s: the module answered invalid JSON %q", req, out)
			}
		}
	})
}
