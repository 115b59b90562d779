/** Where an API key comes from: read it when a call needs it; forget it when the service refused it (HTTP 401). */
export interface ApiKeySource {
  read(): Promise<string>;
  forget(): void;
}
