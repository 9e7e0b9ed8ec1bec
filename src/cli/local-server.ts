// What a local model server is: where it answers, its kind, and the models it offers.

export type ServerKind = 'llama.cpp' | 'Ollama' | 'LM Studio' | 'vLLM';

export interface Place {
  kind: ServerKind;
  /** scheme://host:port */
  origin: string;
}

export interface LocalModel {
  id: string;
  /** The server says the model is loaded (a server of one model: always). */
  loaded: boolean;
}

export interface LocalServer extends Place {
  /** The OpenAI-compatible base, origin + /v1. */
  base: string;
  models: LocalModel[];
  /** The /v1/models answer, parsed: some servers tell limits there (vLLM max_model_len, llama.cpp meta). */
  list: unknown;
}
