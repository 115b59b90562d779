export const handler = async () => ({})
