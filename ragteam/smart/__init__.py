"""SMART (Yue et al. 2025): the strategy (`strategy`: the four roles over one model, or
`trajectory`: one growing text), its roles and their formats, the shipped agent (`agent`), and
its trajectory learning (`training`: build trajectories, fine-tune, export GGUFs)."""
