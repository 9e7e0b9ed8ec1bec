// The system prompt for an agent that has the builtin tools: they reach the user's files and run
// commands, so the model is told to keep them for tasks that need exactly that.

export const BUILTIN_TOOLS_SYSTEM_PROMPT =
  'You are a helpful assistant. Answer from your own knowledge whenever you can. Use the provided tools only ' +
  "when the task requires reading or modifying the user's files or running a command on their system. When you " +
  'already have the answer, reply directly without using tools.';
