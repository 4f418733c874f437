"""SoftPromptModel in-process: SmolLM2 fed ``inputs_embeds`` (GraSP's soft prompts).

The soft prompt — a float tensor (n_tokens, hidden_size), e.g. a projected GNN
graph embedding — is placed before the embedded chat prompt:

    inputs_embeds = [soft_prompt ; embed(chat_template(prompt)) ; embed(target)]

``loss`` runs with autograd on, so gradients flow from the target's
cross-entropy back into the soft prompt (and whatever produced it); the LLM's own
weights are frozen. ``generate`` decodes greedily from the same prefix. The
model is the one LocalChat uses (loaded once per process).
"""

from __future__ import annotations

from kgqa.core.config import Settings
from kgqa.models.accounting import Meter
from kgqa.models.local_chat import load_local_llm


class LocalSoftPrompt:
    """SmolLM2 with a soft prompt before the text (implements ``SoftPromptModel``)."""

    backend = "local"
    name = "SmolLM2-135M-Instruct"

    def __init__(self, settings: Settings, meter: Meter | None = None):
        self.settings = settings
        self.meter = meter or Meter()

    def model_and_tokenizer(self):
        """The in-process LLM and its tokenizer, loaded once, weights frozen (benchmarks)."""
        return self._llm()

    def _llm(self):
        model, tok = load_local_llm(self.settings)
        for p in model.parameters():   # only the soft prompt (and its producer) learn
            p.requires_grad_(False)
        return model, tok

    @property
    def hidden_size(self) -> int:
        return int(self._llm()[0].config.hidden_size)

    def _prefix(self, soft_prompt, prompt: str, system: str | None = None):
        import torch

        model, tok = self._llm()
        if soft_prompt.dim() != 2 or soft_prompt.shape[1] != model.config.hidden_size:
            raise ValueError(f"soft prompt must be (n_tokens, {model.config.hidden_size}), "
                             f"got {tuple(soft_prompt.shape)}")
        msgs = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        text = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
        ids = tok(text, return_tensors="pt", add_special_tokens=False)["input_ids"].to(model.device)
        emb = model.get_input_embeddings()(ids)[0]
        sp = soft_prompt.to(device=emb.device, dtype=emb.dtype)
        return torch.cat([sp, emb], dim=0), ids.shape[1]

    def loss(self, soft_prompt, prompt: str, target: str, *, system: str | None = None):
        """Mean cross-entropy of ``target`` as the reply, given the soft prompt; differentiable."""
        import torch

        model, tok = self._llm()
        with self.meter.call("softprompt") as rec:
            prefix, n_text = self._prefix(soft_prompt, prompt, system)
            tgt = tok(target + "<|im_end|>", return_tensors="pt", add_special_tokens=False)["input_ids"][0]
            tgt = tgt.to(prefix.device)
            emb = torch.cat([prefix, model.get_input_embeddings()(tgt)], dim=0).unsqueeze(0)
            labels = torch.full((1, emb.shape[1]), -100, dtype=torch.long, device=prefix.device)
            labels[0, prefix.shape[0]:] = tgt
            out = model(inputs_embeds=emb, labels=labels)
            rec.prompt_tokens = int(prefix.shape[0])
            rec.completion_tokens = int(tgt.shape[0])
            return out.loss

    def generate(self, soft_prompt, prompt: str, *, max_tokens: int = 64, system: str | None = None) -> str:
        import torch

        model, tok = self._llm()
        with self.meter.call("softprompt") as rec, torch.inference_mode():
            prefix, _ = self._prefix(soft_prompt.detach(), prompt, system)
            emb = prefix.unsqueeze(0)
            mask = torch.ones(emb.shape[:2], dtype=torch.long, device=emb.device)
            out = model.generate(inputs_embeds=emb, attention_mask=mask, max_new_tokens=max_tokens,
                                 do_sample=False, pad_token_id=tok.pad_token_id)
            # with inputs_embeds only, generate returns just the new tokens
            rec.prompt_tokens = int(emb.shape[1])
            rec.completion_tokens = int(out.shape[1])
            return tok.decode(out[0], skip_special_tokens=True)
