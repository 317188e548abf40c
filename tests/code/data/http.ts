export interface Request { path: string }
export interface Response {}
