import htm from "htm";
import { h } from "preact";

/** Tagged templates for Preact components (htm: no build-time JSX). */
export const html = htm.bind(h);
