package zoo

import "github.com/hwtest/hwtest/onnx"

const ragVocab = 1000

func init() {
	register("tiny-rag", model{
		arch:   "rag",
		family: "rag",
		desc: "RAG-style retrieve-then-generate: DPR-like question and context BERT encoders score every " +
			"candidate document (inner product of pooled outputs); the best document's hidden states feed " +
			"a T5-like decoder's cross-attention, which produces the answer logits",
		perturbation: "the context encoder's pooled output is sign-flipped, so every query's document ranking is " +
			"reversed (and a different document is retrieved), and the generator's final RMSNorm weight is " +
			"sign-flipped, so the argmax token changes at every decoder position",
		max: map[string]int64{
			"input_ids": ragVocab, "attention_mask": 2, "doc_ids": ragVocab, "doc_mask": 2, "decoder_input_ids": ragVocab,
		},
		build: buildRAG,
	})
}

func buildRAG(g *onnx.Graph, o Options) {
	n := nn{g}
	q := g.Input("input_ids", onnx.Int64, "batch", "seq")
	qMask := g.Input("attention_mask", onnx.Int64, "batch", "seq")
	docs := g.Input("doc_ids", onnx.Int64, "n_docs", "doc_seq")
	dMask := g.Input("doc_mask", onnx.Int64, "n_docs", "doc_seq")
	dec := g.Input("decoder_input_ids", onnx.Int64, "batch", "dec_seq")

	_, qPooled := n.bert("question_encoder", q, qMask, bertCfg, ragVocab, false)
	dHidden, dPooled := n.bert("ctx_encoder", docs, dMask, bertCfg, ragVocab, false)
	if o.Perturb {
		dPooled = n.mul(dPooled, n.Scalar(-1))
	}
	scores := n.matmul(qPooled, n.op("Transpose", []onnx.Attr{onnx.Ints("perm", 1, 0)}, dPooled)) // [b, n_docs]

	// Retrieve: each query's best document, its hidden states and mask.
	best := n.op("ArgMax", []onnx.Attr{onnx.Int("axis", 1), onnx.Int("keepdims", 0)}, scores)
	ctx := n.Op("Gather", []string{dHidden, best})                  // [b, doc_seq, d]
	ctxMask := n.paddingMask(n.Op("Gather", []string{dMask, best})) // [b, 1, 1, doc_seq]

	table := n.table("generator.shared", ragVocab, t5Cfg.d)
	logits := n.seq2seqDecoder("generator", dec, table, ctx, ctxMask, t5Cfg, o.Perturb)

	g.Node("Identity", []string{scores}, []string{"doc_scores"})
	g.Node("Identity", []string{logits}, []string{"logits"})
	g.Output("doc_scores", onnx.Float32, "batch", "n_docs")
	g.Output("logits", onnx.Float32, "batch", "dec_seq", ragVocab)
}
