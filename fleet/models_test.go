package fleet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// A worker without a model file gets the submitter's through the fleet, checked
// against its sha256; nothing is left at the path when the check fails.
func TestFetchModelFromTheSubmitter(t *testing.T) {
	s, err := StartServer(ServerOptions{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	nc, err := Connect(ConnectOptions{URL: s.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	model := bytes.Repeat([]byte("onnx bytes "), 200_000) // 2.2 MB: several chunks
	src := filepath.Join(t.TempDir(), "model.onnx")
	os.WriteFile(src, model, 0o644)
	sum := sha256.Sum256(model)
	sha := hex.EncodeToString(sum[:])
	sub, err := serveModels(ctx, js, nc, "run1", map[string]ModelFile{sha: {Path: src}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()

	dst := filepath.Join(t.TempDir(), "models", "x", "model.onnx")
	if err := FetchModel(ctx, js, nc, "run1", sha, dst); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, model) {
		t.Errorf("fetched %d bytes, want the submitter's %d", len(got), len(model))
	}
	// Not the submitter's: it says so.
	other := strings.Repeat("a", 64)
	if err := FetchModel(ctx, js, nc, "run1", other, dst+".2"); err == nil || !strings.Contains(err.Error(), "the submitter has no model file of sha256 aaaaaaaaaaaa") {
		t.Errorf("unknown file: %v", err)
	}
	// A store entry whose bytes are not what its name says is refused, and leaves
	// nothing behind.
	obs, _ := modelStore(ctx, js)
	if _, err := obs.PutBytes(ctx, other, []byte("not that model")); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(filepath.Dir(dst), "bad.onnx")
	if err := FetchModel(ctx, js, nc, "run1", other, bad); err == nil || !strings.Contains(err.Error(), "not aaaaaaaaaaaa") {
		t.Errorf("corrupt copy: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(dst))
	if len(entries) != 1 {
		t.Errorf("left in the folder: %v, want model.onnx alone", entries)
	}
}
