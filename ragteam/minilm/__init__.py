"""The installed MiniLM as a cross-encoder (`cross_encoder`), shared by the models built on it
(the block reranker, the support checker, the span reader), and fine-tuning its top layers and
head (`top_layers`)."""
