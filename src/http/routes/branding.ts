// The operator's settings of what buyers see of a product on the hosted pages.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { IdParams } from '../../core/schemas.js';
import { BRAND_COLOR_PATTERN, DISPLAY_NAME_MAX, LOGO_MAX_BYTES, logoOfDataUrl, type Branding } from '../../modules/products/branding.js';
import type { ProductsService } from '../../modules/products/service.js';
import type { OperatorActions } from '../../modules/operators/actions.js';
import { API_ACTOR } from '../../modules/operators/service.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

const BrandingBody = Type.Object(
  {
    displayName: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: DISPLAY_NAME_MAX, description: "The name buyers see on the hosted pages; null: the product's name" }))),
    brandColor: Type.Optional(Nullable(Type.String({ pattern: BRAND_COLOR_PATTERN, description: "Buttons and links of the hosted pages, as #RRGGBB; null: Tolov's colour" }))),
    logo: Type.Optional(
      Nullable(
        Type.String({
          maxLength: Math.ceil(LOGO_MAX_BYTES / 3) * 4 + 32,
          description: `A PNG, JPEG or WebP image of at most ${LOGO_MAX_BYTES / 1024} KiB as a data: URL (data:image/png;base64,…); null removes it`,
        }),
      ),
    ),
  },
  { title: 'BrandingBody', additionalProperties: false, description: 'Only the fields sent change' },
);
type BrandingBody = Static<typeof BrandingBody>;

const BrandingObject = Type.Object({
  object: Type.Literal('branding'),
  product: Type.String(),
  displayName: Type.Union([Type.String(), Type.Null()]),
  brandColor: Type.Union([Type.String(), Type.Null()], { description: '#rrggbb' }),
  logoUrl: Type.Union([Type.String({ format: 'uri' }), Type.Null()], { description: 'Where Tolov serves the logo; it never changes for the same image' }),
}, { title: 'Branding' });

export const brandingRoutes: FastifyPluginAsync<{ products: ProductsService; actions: OperatorActions; publicUrl: string }> = async (app, { products, actions, publicUrl }) => {
  const config = { auth: { kind: 'admin' } } as const;
  const tags = ['operator'];
  const presentBranding = (branding: Branding) => ({
    object: 'branding' as const,
    product: branding.productId,
    displayName: branding.displayName,
    brandColor: branding.brandColor,
    logoUrl: branding.logoDigest === null ? null : `${publicUrl}/brand/logos/${branding.logoDigest}`,
  });

  app.get<{ Params: IdParams }>(
    '/admin/v1/products/:id/branding',
    { config, schema: { tags, operationId: 'getBranding', summary: "A product's branding on the hosted pages", params: IdParams, response: { 200: BrandingObject } } },
    async (request) => presentBranding(await products.branding(request.params.id)),
  );

  app.post<{ Params: IdParams; Body: BrandingBody }>(
    '/admin/v1/products/:id/branding',
    {
      config,
      bodyLimit: 256 * 1024,
      schema: {
        tags,
        operationId: 'updateBranding',
        summary: 'Set the name, colour and logo buyers see on the hosted pages',
        params: IdParams,
        body: BrandingBody,
        response: { 200: BrandingObject },
      },
    },
    async (request) => {
      const { logo, ...rest } = request.body;
      const change = logo === undefined ? rest : { ...rest, logo: logo === null ? null : logoOfDataUrl(logo) };
      return presentBranding(await actions.changeBranding(API_ACTOR, request.params.id, change));
    },
  );
};
