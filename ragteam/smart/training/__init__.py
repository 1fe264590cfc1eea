"""SMART trajectory learning: build trajectories, fine-tune (full or LoRA), export GGUFs."""

# Every linear layer of a llama block (attention and MLP): LoRA's default targets, and what
# llama.cpp's GGUF adapters can hold.
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
