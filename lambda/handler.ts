// Work in progress: replaced by the real handler (lead engineer is writing it).
export const handler = async (_event: unknown): Promise<{ outcome: string }> => ({ outcome: 'failed' });
