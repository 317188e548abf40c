import { Request, Response } from "./http";
import express from "express";
export { helper } from "./util/helpers";

/** Routes requests to handlers. */
export interface Handler {
  handle(req: Request): Promise<Response>;
}

export type Method = "GET" | "POST";

export enum Status {
  Ok = 200,
  NotFound = 404,
}

/**
 * Matches paths against routes.
 */
export class Router {
  private routes: Map<string, Handler> = new Map();

  add(path: string, handler: Handler): void {
    this.routes.set(path, handler);
  }

  async dispatch(req: Request): Promise<Response> {
    const handler = this.routes.get(req.path);
    if (!handler) {
      throw new Error("no route");
    }
    return handler.handle(req);
  }
}

export const parseURL = (raw: string): URL => new URL(raw);

export function createRouter(): Router {
  return new Router();
}
